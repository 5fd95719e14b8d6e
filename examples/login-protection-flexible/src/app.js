// rate-limiter-flexible's login brute-force recipe (its wiki's "Login endpoint protection"), written against
// rate-limiter-flexible's API. The only line that changed for ratekit is the import below: it was
// `from 'rate-limiter-flexible'`.
//
// Two limiters, both counting failed logins only:
// - per IP: 100 failures per day, then the IP is blocked for a day (slow brute force from one address);
// - per username and IP: 10 consecutive failures (kept 90 days), then that pair is blocked for an hour.
// A successful login deletes the username+IP count. Blocked attempts are refused before the password is checked.
import { createHash, timingSafeEqual } from 'node:crypto';
import express from 'express';
import { RateLimiterMemory, RateLimiterRedis, RateLimiterRes } from '@ratekit/flexible';

export const MAX_WRONG_ATTEMPTS_BY_IP_PER_DAY = 100;
export const MAX_CONSECUTIVE_FAILS_BY_USERNAME_AND_IP = 10;

/**
 * The two limiters: on Redis when a client is given (ioredis or node-redis), shared by every process
 * serving logins; else in this process's memory.
 *
 * @param {unknown} [redisClient]
 * @param {string} [prefix] - prefix of both key prefixes (so tests can keep their keys apart)
 */
export function createLimiters(redisClient, prefix = 'login') {
  const make = (options) => (redisClient ? new RateLimiterRedis({ storeClient: redisClient, ...options }) : new RateLimiterMemory(options));
  return {
    slowBruteByIP: make({ keyPrefix: `${prefix}_fail_ip_per_day`, points: MAX_WRONG_ATTEMPTS_BY_IP_PER_DAY, duration: 60 * 60 * 24, blockDuration: 60 * 60 * 24 }),
    consecutiveFailsByUsernameAndIP: make({
      keyPrefix: `${prefix}_fail_consecutive_username_and_ip`,
      points: MAX_CONSECUTIVE_FAILS_BY_USERNAME_AND_IP,
      duration: 60 * 60 * 24 * 90,
      blockDuration: 60 * 60,
    }),
  };
}

const digest = (password) => createHash('sha256').update(String(password)).digest();

/**
 * The Express app: `POST /login` with `{ username, password }`.
 *
 * @param {{ users?: Record<string, string>, limiters?: ReturnType<typeof createLimiters>, trustProxy?: boolean }} [options]
 */
export function createApp({ users = { alice: 'correct horse battery staple' }, limiters = createLimiters(), trustProxy = false } = {}) {
  const accounts = new Map(Object.entries(users).map(([name, password]) => [name, digest(password)]));
  const { slowBruteByIP, consecutiveFailsByUsernameAndIP } = limiters;
  const app = express();
  app.set('trust proxy', trustProxy);
  app.use(express.json());

  app.post('/login', async (req, res, next) => {
    const username = String(req.body?.username ?? '');
    const usernameIPkey = `${username}_${req.ip}`;
    try {
      const [resUsernameAndIP, resSlowByIP] = await Promise.all([consecutiveFailsByUsernameAndIP.get(usernameIPkey), slowBruteByIP.get(req.ip)]);

      // Already blocked: refuse before checking the password.
      let retrySecs = 0;
      if (resSlowByIP !== null && resSlowByIP.consumedPoints > MAX_WRONG_ATTEMPTS_BY_IP_PER_DAY) {
        retrySecs = Math.round(resSlowByIP.msBeforeNext / 1000) || 1;
      } else if (resUsernameAndIP !== null && resUsernameAndIP.consumedPoints > MAX_CONSECUTIVE_FAILS_BY_USERNAME_AND_IP) {
        retrySecs = Math.round(resUsernameAndIP.msBeforeNext / 1000) || 1;
      }
      if (retrySecs > 0) {
        res.set('Retry-After', String(retrySecs));
        res.status(429).send('Too Many Requests');
        return;
      }

      const expected = accounts.get(username);
      const given = digest(req.body?.password ?? '');
      if (expected === undefined || !timingSafeEqual(expected, given)) {
        // A failure: count it on both limiters.
        try {
          await Promise.all([slowBruteByIP.consume(req.ip), consecutiveFailsByUsernameAndIP.consume(usernameIPkey)]);
          res.status(400).send('email or password is wrong');
        } catch (rlRejected) {
          if (!(rlRejected instanceof RateLimiterRes)) throw rlRejected; // a store failure (an Error)
          res.set('Retry-After', String(Math.round(rlRejected.msBeforeNext / 1000) || 1));
          res.status(429).send('Too Many Requests');
        }
        return;
      }

      // A success: forget this username+IP's failures.
      if (resUsernameAndIP !== null && resUsernameAndIP.consumedPoints > 0) await consecutiveFailsByUsernameAndIP.delete(usernameIPkey);
      res.json({ ok: true, user: username });
    } catch (error) {
      next(error);
    }
  });

  return app;
}
