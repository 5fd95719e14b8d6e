import { Redis } from 'ioredis';
import request from 'supertest';
import { createApp, createLimiters, MAX_CONSECUTIVE_FAILS_BY_USERNAME_AND_IP } from './app.js';

const T0 = 1_795_262_400_000;
const PASSWORD = 'correct horse battery staple';
type App = ReturnType<typeof createApp>;
type Limiters = ReturnType<typeof createLimiters>;

/** One attempt: the status and Retry-After, as the table rows read. */
async function attempt(app: App, username: string, password: string, ip: string): Promise<string> {
  const res = await request(app).post('/login').set('X-Forwarded-For', ip).send({ username, password });
  return res.headers['retry-after'] === undefined ? String(res.status) : `${res.status} retry ${res.headers['retry-after']}`;
}

/** The recipe's story on a frozen clock: 10 failures, the 11th blocks the username+IP pair for an hour; a success resets the count. */
async function story(app: App, moveClock?: (ms: number) => void): Promise<string[]> {
  const seen: string[] = [];
  for (let i = 0; i < MAX_CONSECUTIVE_FAILS_BY_USERNAME_AND_IP; i++) seen.push(await attempt(app, 'alice', `guess ${i}`, '203.0.113.1'));
  seen.push(await attempt(app, 'alice', 'guess 11', '203.0.113.1')); // the 11th failure: blocked for an hour
  seen.push(await attempt(app, 'alice', PASSWORD, '203.0.113.1')); // refused before the password is checked
  seen.push(await attempt(app, 'alice', PASSWORD, '203.0.113.2')); // another IP: another pair
  for (let i = 0; i < 3; i++) seen.push(await attempt(app, 'bob', `guess ${i}`, '203.0.113.3'));
  seen.push(await attempt(app, 'bob', 'wrong', '203.0.113.3'));
  if (moveClock !== undefined) {
    moveClock(60 * 60 * 1000 + 1000);
    seen.push(await attempt(app, 'alice', PASSWORD, '203.0.113.1')); // the hour's block is over
  }
  return seen;
}

const EXPECTED = [...Array<string>(10).fill('400'), '429 retry 3600', '429 retry 3600', '200', '400', '400', '400', '400'];

describe('rate-limiter-flexible’s login recipe, unchanged but for its import, on @ratekit/flexible', () => {
  beforeEach(() => jest.useFakeTimers({ now: T0, doNotFake: ['nextTick', 'setImmediate', 'setTimeout', 'clearTimeout', 'setInterval', 'clearInterval', 'queueMicrotask'] }));
  afterEach(() => jest.useRealTimers());

  it('on RateLimiterMemory: blocks the 11th consecutive failure for an hour, then lets the user in', async () => {
    const app = createApp({ trustProxy: true, users: { alice: PASSWORD, bob: 'b' } });
    expect(await story(app, (ms) => jest.setSystemTime(T0 + ms))).toEqual([...EXPECTED, '200']);
  });

  it('keeps the 90-day count that rate-limiter-flexible 11.4.0’s RateLimiterMemory loses (the same module on rlf: one setTimeout per key overflows, #71)', async () => {
    let rlfLimiters: Limiters | undefined;
    await jest.isolateModulesAsync(async () => {
      jest.doMock('@ratekit/flexible', () => jest.requireActual<object>('rate-limiter-flexible'));
      rlfLimiters = (await import('./app.js')).createLimiters();
    });
    const theirs = (rlfLimiters as Limiters).consecutiveFailsByUsernameAndIP;
    const ours = createLimiters().consecutiveFailsByUsernameAndIP;
    await Promise.all([theirs.consume('alice_203.0.113.1'), ours.consume('alice_203.0.113.1')]);
    // rlf's 90-day timer does not fit in 32 bits: Node fires it after 1 ms, deleting the count. Wait for that (bounded).
    for (let spins = 0; (await theirs.get('alice_203.0.113.1')) !== null; spins++) {
      if (spins > 1000) throw new Error('rate-limiter-flexible kept the key: has #71 been fixed?');
      await new Promise((resolve) => setTimeout(resolve, 1));
    }
    expect((await ours.get('alice_203.0.113.1'))?.consumedPoints).toBe(1);
  });

  it('a success resets the username+IP count: 10 more failures are allowed before the block', async () => {
    const app = createApp({ trustProxy: true, users: { carol: 'c' } });
    for (let i = 0; i < 5; i++) await attempt(app, 'carol', 'x', '198.51.100.1');
    expect(await attempt(app, 'carol', 'c', '198.51.100.1')).toBe('200');
    const after: string[] = [];
    for (let i = 0; i < 11; i++) after.push(await attempt(app, 'carol', 'x', '198.51.100.1'));
    expect(after).toEqual([...Array<string>(10).fill('400'), '429 retry 3600']);
  });
});

describe('the same recipe on RateLimiterRedis (127.0.0.1:6379, keys under a prefix of its own, deleted after)', () => {
  const prefix = `ratekit_example_login_${process.pid}_${Date.now()}`;
  let redis: Redis;
  let limiters: Limiters;

  beforeAll(() => {
    redis = new Redis({ host: '127.0.0.1', port: 6379, lazyConnect: false, maxRetriesPerRequest: 1 });
    limiters = createLimiters(redis, prefix);
  });
  afterAll(async () => {
    const keys = await redis.keys(`${prefix}_*`);
    if (keys.length > 0) await redis.del(...keys);
    await redis.quit();
  });

  it('counts, blocks and resets as on memory (Redis’ own clock: no time is moved)', async () => {
    const app = createApp({ trustProxy: true, users: { alice: PASSWORD, bob: 'b' }, limiters });
    expect(await story(app)).toEqual(EXPECTED);
    expect(await redis.get(`${prefix}_fail_consecutive_username_and_ip:alice_203.0.113.1`)).toBe('11'); // rate-limiter-flexible's layout
    expect(await redis.ttl(`${prefix}_fail_consecutive_username_and_ip:alice_203.0.113.1`)).toBeGreaterThan(3590);
  });
});
