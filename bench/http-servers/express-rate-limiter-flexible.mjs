// Express 5 with rate-limiter-flexible's minimal middleware (its wiki's Express middleware:
// `consume(req.ip)`, then next() or 429), plus the README's headers (lib/http-rlflex.mjs).
//
// Scenarios `pass` / `reject`: that middleware, the cheapest peer. `dropin-pass` / `dropin-reject`:
// the same plus what express-rate-limit's contract adds to every response, which a drop-in for it
// must do and this middleware does not: `req.rateLimit` (`{ limit, used, remaining, resetTime, key }`
// with the hidden `current`) and the `Date` header beside `X-RateLimit-Reset`. A floor to read
// @ratekit/express against (bench/notes/http.md, "Per HTTP response"), not a limiter to use.
// `flexible-pass` / `flexible-reject`: the first pair on @ratekit/flexible, only the import changed (issue 32).
import express from 'express';
import { flexibleLimiter, TOO_MANY } from '../lib/http-rlflex.mjs';
import { HELLO, limitOf, listenNode, serveHttp } from '../lib/http-server.mjs';

serveHttp((scenario) => {
  const ours = scenario.startsWith('flexible-');
  const dropIn = scenario.startsWith('dropin-');
  const limit = limitOf(scenario.replace(/^(dropin|flexible)-/, ''));
  const { limiter, headers } = flexibleLimiter(limit, { dropIn: ours });
  // The Date header's text, made once per second (as @ratekit/express makes it).
  let dateSecond = Number.NaN;
  let dateText = '';
  const contract = (req, res, rlRes) => {
    const nowMs = Date.now();
    const used = rlRes.consumedPoints;
    const info = { limit, used, remaining: Math.max(limit - used, 0), resetTime: new Date(nowMs + rlRes.msBeforeNext), key: req.ip };
    Object.defineProperty(info, 'current', { configurable: false, enumerable: false, value: used });
    req.rateLimit = info;
    const second = Math.floor(nowMs / 1_000);
    if (second !== dateSecond) {
      dateSecond = second;
      dateText = new Date(second * 1_000).toUTCString();
    }
    res.setHeader('Date', dateText);
  };
  const app = express();
  app.use((req, res, next) => {
    limiter
      .consume(req.ip)
      .then((rlRes) => {
        if (dropIn) contract(req, res, rlRes);
        res.set(headers(rlRes, false));
        next();
      })
      .catch((rlRes) => {
        if (rlRes instanceof Error) return next(rlRes);
        if (dropIn) contract(req, res, rlRes);
        res.set(headers(rlRes, true));
        res.status(429).send(TOO_MANY);
      });
  });
  app.get('/', (_req, res) => {
    res.send(HELLO);
  });
  return listenNode(app);
});
