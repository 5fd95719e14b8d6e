import { memoryStore } from '@ratekit/core';
import request from 'supertest';
import { createApp, IP_LIMIT, USERNAME_LIMIT, usernameKey } from './app.js';

const T0 = 1_795_262_400_000;
const MINUTE = 60_000;
const PASSWORD = 'correct horse battery staple';

/** The app on a clock the test moves, trusting X-Forwarded-For so each test can pick client IPs. */
function setup() {
  let now = T0;
  const app = createApp({ now: () => now, trustProxy: true, store: memoryStore({ pruneIntervalMs: 0 }) });
  const login = (username: string, password: string, ip = '203.0.113.7') => request(app).post('/login').set('X-Forwarded-For', ip).send({ username, password });
  return { login, at: (ms: number) => (now = T0 + ms) };
}

describe('login-protection example', () => {
  it('the limits are the recipe’s: 5 failures per 15 min per username, 20 per hour per IP, each with a block', () => {
    expect(USERNAME_LIMIT).toMatchObject({ limit: 5, windowMs: 15 * MINUTE, blockDurationMs: 15 * MINUTE });
    expect(IP_LIMIT).toMatchObject({ limit: 20, windowMs: 60 * MINUTE, blockDurationMs: 60 * MINUTE });
  });

  it('a correct password logs in', async () => {
    const { login } = setup();
    const res = await login('alice', PASSWORD);
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ ok: true, user: 'alice' });
  });

  it('5 failures are answered 401; the 6th attempt is refused with 429 and blocks the username for 15 minutes, even with the right password', async () => {
    const { login, at } = setup();
    const statuses: number[] = [];
    for (let i = 0; i < 5; i++) statuses.push((await login('alice', `guess ${i}`)).status);
    expect(statuses).toEqual([401, 401, 401, 401, 401]);
    // The window (from the first failure, at 0) ends at 15 min; the 6th attempt, at 14 min, blocks to 29 min.
    at(14 * MINUTE);
    const blocked = await login('alice', 'guess 6');
    expect(blocked.status).toBe(429);
    expect(blocked.headers['retry-after']).toBe(String(15 * 60));
    expect(blocked.body).toEqual({ error: 'Too many failed login attempts. Try again later.' });
    // At 16 min the window alone would admit again: the block still refuses, even the right password.
    at(16 * MINUTE);
    const right = await login('alice', PASSWORD);
    expect(right.status).toBe(429);
    expect(right.headers['retry-after']).toBe(String(13 * 60));
    at(29 * MINUTE);
    expect((await login('alice', PASSWORD)).status).toBe(200);
  });

  it('the block holds from another IP: it protects the account, not just one client', async () => {
    const { login } = setup();
    for (let i = 0; i < 6; i++) await login('alice', `guess ${i}`, '203.0.113.7');
    expect((await login('alice', PASSWORD, '198.51.100.1')).status).toBe(429);
  });

  it('a success resets the username: the next failures start from zero', async () => {
    const { login } = setup();
    for (let i = 0; i < 4; i++) expect((await login('alice', `guess ${i}`)).status).toBe(401);
    expect((await login('alice', PASSWORD)).status).toBe(200);
    for (let i = 0; i < 5; i++) expect((await login('alice', `guess ${i}`)).status).toBe(401);
    expect((await login('alice', 'one more')).status).toBe(429);
  });

  it('unknown usernames are counted and answered exactly like wrong passwords (no enumeration through the answers)', async () => {
    const { login } = setup();
    const known = await login('alice', 'wrong');
    const unknown = await login('mallory', 'wrong');
    expect([unknown.status, unknown.body]).toEqual([known.status, known.body]);
    for (let i = 0; i < 4; i++) await login('mallory', 'wrong');
    const blocked = await login('mallory', 'wrong');
    expect(blocked.status).toBe(429);
  });

  it('spellings of one username share its budget', async () => {
    expect(usernameKey('  Alice ')).toBe('alice');
    expect(usernameKey('ａｌｉｃｅ')).toBe('alice'); // fullwidth, NFKC
    const { login } = setup();
    for (const spelling of ['alice', 'Alice', ' ALICE', 'alicE ', 'aLice']) expect((await login(spelling, 'wrong')).status).toBe(401);
    expect((await login('alice', PASSWORD)).status).toBe(429);
  });

  it('per IP: 20 failures across many usernames, then the IP is blocked for an hour; the usernames it tried are not', async () => {
    const { login, at } = setup();
    for (let i = 0; i < 20; i++) expect((await login(`user${i}`, 'wrong')).status).toBe(401);
    const blocked = await login('user99', 'wrong');
    expect(blocked.status).toBe(429);
    expect(blocked.headers['retry-after']).toBe(String(60 * 60));
    // Another client can still log in as alice; the blocked IP cannot, even with her password.
    expect((await login('alice', PASSWORD, '198.51.100.1')).status).toBe(200);
    expect((await login('alice', PASSWORD)).status).toBe(429);
    at(60 * MINUTE);
    expect((await login('alice', PASSWORD)).status).toBe(200);
  });

  it('IPv6 clients are grouped by /56 (ipKeyGenerator): rotating addresses within the network does not reset the budget', async () => {
    const { login } = setup();
    for (let i = 0; i < 20; i++) expect((await login(`user${i}`, 'wrong', `2001:db8:1234:5600::${i + 1}`)).status).toBe(401);
    expect((await login('user20', 'wrong', '2001:db8:1234:56ff:ffff::1')).status).toBe(429);
    // Another /56 is another client.
    expect((await login('user21', 'wrong', '2001:db8:1234:5700::1')).status).toBe(401);
  });

  it('a success gives the IP its attempt back but keeps its other failures', async () => {
    const { login } = setup();
    for (let i = 0; i < 19; i++) await login(`user${i}`, 'wrong');
    expect((await login('alice', PASSWORD)).status).toBe(200);
    expect((await login('user19', 'wrong')).status).toBe(401);
    expect((await login('user20', 'wrong')).status).toBe(429);
  });
});
