// Brute-force login protection (docs/recipes/login-protection.md): failed logins are
// counted per username and per client IP; after too many, the key is blocked for a while
// (blockDurationMs); a successful login resets the username and gives the IP its attempt back.
import { createHash, timingSafeEqual } from 'node:crypto';
import { createLimiter, ipKeyGenerator, memoryStore, retryAfterSeconds, stackLimiters } from '@ratekit/core';
import express from 'express';

/**
 * Per username: 5 failed attempts per 15 minutes. The 6th attempt is refused and blocks
 * the username for 15 minutes, whatever the window does meanwhile.
 */
export const USERNAME_LIMIT = Object.freeze({ limit: 5, windowMs: 15 * 60_000, blockDurationMs: 15 * 60_000, name: 'login-username' });

/**
 * Per client IP (IPv6 grouped by /56, see ipKeyGenerator): 20 failed attempts per hour,
 * then blocked for an hour. Generous, because many users can share one address (NAT, CGNAT).
 */
export const IP_LIMIT = Object.freeze({ limit: 20, windowMs: 60 * 60_000, blockDurationMs: 60 * 60_000, name: 'login-ip' });

/** The one answer to a failed login, whether the username exists or not. */
const INVALID = Object.freeze({ error: 'Invalid username or password.' });
/** The one answer to a blocked attempt, whichever key is blocked. */
const BLOCKED = Object.freeze({ error: 'Too many failed login attempts. Try again later.' });

/**
 * The same key for `Alice`, `alice` and ` alice `: otherwise an attacker gets a fresh
 * budget per spelling. Length-capped so a huge body cannot make a huge key.
 */
export function usernameKey(username) {
  return String(username ?? '')
    .normalize('NFKC')
    .trim()
    .toLowerCase()
    .slice(0, 256);
}

/** A demo password check. Use a real password hash (argon2, bcrypt, scrypt) in production. */
function digest(password) {
  return createHash('sha256')
    .update(String(password ?? ''))
    .digest();
}

/**
 * Builds the app.
 *
 * @param {{
 *   users?: Record<string, string>,
 *   store?: import('@ratekit/core').RateLimitStore,
 *   now?: () => number,
 *   trustProxy?: boolean | number | string,
 * }} [options]
 *   `users`: username → password (demo only); `store`: where failures are counted (default a new
 *   in-memory store; use @ratekit/redis, @ratekit/postgres or @ratekit/memcached when several
 *   processes serve logins); `now`: the clock, for tests; `trustProxy`: Express's `trust proxy`
 *   setting, so that behind a proxy req.ip is the client's address (default false: the socket's).
 */
export function createApp({ users = { alice: 'correct horse battery staple' }, store = memoryStore(), now, trustProxy = false } = {}) {
  const accounts = new Map(Object.entries(users).map(([name, password]) => [usernameKey(name), digest(password)]));
  // Compared against when the username does not exist, so both cases take the same work.
  const decoy = digest('decoy password that never matches');
  const byUsername = createLimiter({ limits: USERNAME_LIMIT, store, prefix: 'login:username', now });
  const byIp = createLimiter({ limits: IP_LIMIT, store, prefix: 'login:ip', now });
  // All-or-nothing: an attempt counts against both keys, or (when one is blocked) against neither.
  const attempts = stackLimiters(byUsername, byIp);

  const app = express();
  app.disable('x-powered-by');
  // Behind a proxy, set `trust proxy` so req.ip is the client's address, not the proxy's.
  app.set('trust proxy', trustProxy);
  app.use(express.json({ limit: '4kb' }));

  app.post('/login', async (req, res, next) => {
    try {
      const user = usernameKey(req.body?.username);
      const ip = ipKeyGenerator(req.ip ?? '');
      // Count the attempt first: a blocked key never reaches the password check.
      const attempt = await attempts.consume([user, ip]);
      if (!attempt.allowed) {
        res.set('Retry-After', String(retryAfterSeconds(attempt)));
        res.status(429).json(BLOCKED);
        return;
      }
      const expected = accounts.get(user);
      const ok = timingSafeEqual(digest(req.body?.password), expected ?? decoy) && expected !== undefined;
      if (!ok) {
        // The failure stays counted. Unknown usernames are counted and answered the same way.
        res.status(401).json(INVALID);
        return;
      }
      // Success: the username starts afresh; the IP gets this attempt back, but keeps its
      // other failures (a success on one account must not wipe out guesses on others).
      await byUsername.reset(user);
      await byIp.refund(ip);
      res.json({ ok: true, user });
    } catch (error) {
      next(error);
    }
  });

  return app;
}
