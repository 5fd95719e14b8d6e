import { memoryStore, RateKitError, type RateLimitStore } from '@ratekit/core';
import type { FastifyRequest } from 'fastify';
import { gateOf } from './ratekit.js';
import type { RateLimitPluginOptions } from './types.js';
import { createSteps, type Outcome, type Steps } from './ratekit-extras.js';
import { resolveRegistration } from './ratekit-options.js';

const T0 = Date.UTC(2026, 10, 21, 12, 0, 0);
let t = T0;
const now = () => t;

function stepsWith(options: RateLimitPluginOptions, store: RateLimitStore = memoryStore({ pruneIntervalMs: 0 })): Steps {
  const { settings } = resolveRegistration(options);
  const shared = { store, now, onError: () => {}, refusalCache: undefined };
  return createSteps(gateOf(settings, shared, 'test:'), settings, shared, 'test:');
}

function request(ip = '203.0.113.7', headers: Record<string, string> = {}): FastifyRequest {
  return { ip, headers } as unknown as FastifyRequest;
}

/** Runs a timeline: at each second offset, one counted decision; returns what each got. */
function run(steps: Steps, seconds: number[]): string[] {
  return seconds.map((s) => {
    t = T0 + s * 1000;
    return summary(steps.decide(request()) as Outcome);
  });
}

function summary(outcome: Outcome): string {
  if (outcome.key === undefined) return 'unlimited';
  if (outcome.decision.allowed) return 'allowed';
  return `${outcome.banned === true ? 'banned' : 'refused'} ${Math.ceil(outcome.decision.retryAfterMs / 1000)}s`;
}

beforeEach(() => {
  t = T0;
});

describe("@fastify/rate-limit's per-request options on the gate", () => {
  describe('with max 2 per 10 seconds (the defaults otherwise)', () => {
    it('admits two requests per window, synchronously, and refuses the third until the window ends', () => {
      const steps = stepsWith({ max: 2, timeWindow: '10 seconds' });
      // time (s):                       0          1          2            9.5          10
      expect(run(steps, [0, 1, 2, 9.5, 10])).toEqual(['allowed', 'allowed', 'refused 8s', 'refused 1s', 'allowed']);
    });
  });

  describe('peeking (createRateLimit, increment: false)', () => {
    it('reports what a counted request would get and charges nothing', async () => {
      const steps = stepsWith({ max: 1, timeWindow: 10_000 });
      expect(await steps.check(request(), { increment: false })).toMatchObject({ isExceeded: false, remaining: 1, decision: { cost: 1 } });
      expect(await steps.check(request())).toMatchObject({ isExceeded: false, remaining: 0 });
      expect(await steps.check(request(), { increment: false })).toMatchObject({ isExceeded: true });
      expect(await steps.check(request(), { increment: false })).toMatchObject({ isExceeded: true });
    });
  });

  describe('with ban', () => {
    it('ban 2: the first two refusals in the window are 429s, the rest are bans until the window ends', () => {
      const steps = stepsWith({ max: 1, timeWindow: '10 seconds', ban: 2 });
      // time (s):                        0          1            2            3           4            11
      expect(run(steps, [0, 1, 2, 3, 4, 11])).toEqual(['allowed', 'refused 9s', 'refused 8s', 'banned 7s', 'banned 6s', 'allowed']);
    });

    it('ban 0: the first refusal is already a ban', () => {
      const steps = stepsWith({ max: 1, timeWindow: '10 seconds', ban: 0 });
      expect(run(steps, [0, 1])).toEqual(['allowed', 'banned 9s']);
    });

    it('ban -1 (the default): never a ban', () => {
      const steps = stepsWith({ max: 1, timeWindow: '10 seconds' });
      expect(run(steps, [0, 1, 2, 3, 4, 5])).toEqual(['allowed', 'refused 9s', 'refused 8s', 'refused 7s', 'refused 6s', 'refused 5s']);
    });

    it('peeking tells whether the next refusal would be a ban, without counting it', async () => {
      const steps = stepsWith({ max: 1, timeWindow: '10 seconds', ban: 1 });
      run(steps, [0, 1]); // allowed, then one 429
      expect(await steps.check(request(), { increment: false })).toMatchObject({ isExceeded: true, isBanned: true });
      expect(await steps.check(request(), { increment: false })).toMatchObject({ isExceeded: true, isBanned: true });
    });
  });

  describe('with continueExceeding', () => {
    it('restarts the window at each refused attempt, so a client that keeps trying stays refused', () => {
      const steps = stepsWith({ max: 1, timeWindow: '10 seconds', continueExceeding: true });
      // Without it the window of t=0 would end at 10 s. Each refusal restarts it: 5 → 15, 12 → 22.
      // time (s):                         0          5             12            23
      expect(run(steps, [0, 5, 12, 23])).toEqual(['allowed', 'refused 10s', 'refused 10s', 'allowed']);
    });

    it('sends the headers of the restarted window', () => {
      const steps = stepsWith({ max: 1, timeWindow: '10 seconds', continueExceeding: true });
      run(steps, [0]);
      t = T0 + 5_000;
      const outcome = steps.decide(request()) as Outcome;
      expect(outcome.headers).toContainEqual(['Retry-After', '10']);
    });

    it('leaves a peek alone: only counted refusals restart the window', async () => {
      const steps = stepsWith({ max: 1, timeWindow: '10 seconds', continueExceeding: true });
      run(steps, [0]);
      t = T0 + 5_000;
      expect(await steps.check(request(), { increment: false })).toMatchObject({ isExceeded: true, ttlInSeconds: 5 });
      expect(run(steps, [10])).toEqual(['allowed']);
    });
  });

  describe('with max as a function of the request and key', () => {
    it('asks it per request (it may be async) and limits by its answer', async () => {
      const seen: string[] = [];
      const steps = stepsWith({
        timeWindow: 60_000,
        max: async (req, key) => {
          seen.push(key);
          return req.headers['x-plan'] === 'pro' ? 3 : 1;
        },
      });
      const pro = () => steps.decide(request('198.51.100.1', { 'x-plan': 'pro' })) as Promise<Outcome>;
      const free = () => steps.decide(request('198.51.100.2')) as Promise<Outcome>;
      expect((await Promise.all([pro(), pro(), pro(), pro()])).map(summary)).toEqual(['allowed', 'allowed', 'allowed', 'refused 60s']);
      expect((await Promise.all([free(), free()])).map(summary)).toEqual(['allowed', 'refused 60s']);
      expect(seen.slice(0, 2)).toEqual(['198.51.100.1', '198.51.100.1']);
    });

    it('fails the request with a coded error when it answers something other than an integer >= 1', () => {
      const steps = stepsWith({ max: () => 0 });
      expect(() => steps.decide(request())).toThrow(expect.objectContaining({ code: 'ERR_RATEKIT_INVALID_OPTION', option: 'max(request, key)' }));
    });
  });

  describe('with an allowList', () => {
    it('an array: listed keys are neither counted nor refused, and get no headers', async () => {
      const steps = stepsWith({ max: 1, allowList: ['203.0.113.7'] });
      expect([steps.decide(request()), steps.decide(request())]).toEqual([
        { key: undefined, decision: undefined, headers: undefined },
        { key: undefined, decision: undefined, headers: undefined },
      ]);
      expect(summary(steps.decide(request('198.51.100.9')) as Outcome)).toBe('allowed');
      expect(await steps.check(request())).toEqual({ isAllowed: true, key: '203.0.113.7' });
    });

    it('a function of the request and key (it may be async)', async () => {
      const steps = stepsWith({ max: 1, allowList: async (_req, key) => key.startsWith('10.') });
      expect((await steps.decide(request('10.0.0.1'))).key).toBeUndefined();
      expect(summary(await steps.decide(request('192.0.2.1')))).toBe('allowed');
    });
  });

  describe('keys (the gate rule)', () => {
    it('groups IPv6 clients by /56 by default', () => {
      const steps = stepsWith({ max: 1 });
      expect(steps.decide(request('2001:db8:1234:5678::1'))).toMatchObject({ key: '2001:db8:1234:5600::/56', decision: { allowed: true } });
      expect(steps.decide(request('2001:db8:1234:56ff::2'))).toMatchObject({ key: '2001:db8:1234:5600::/56', decision: { allowed: false } });
    });

    it('fails a request without an IP with ERR_RATEKIT_KEY (the gate rule: no key, no silent pass)', async () => {
      await expect(stepsWith({ max: 1 }).decide(request(''))).rejects.toMatchObject({ code: 'ERR_RATEKIT_KEY' });
    });

    it.each([
      [
        'throws',
        () => {
          throw new Error('no session');
        },
        'The keyGenerator failed: no session',
      ],
      ['returns undefined', () => undefined, 'got undefined'],
      ['returns an empty string', () => '', 'got ""'],
      ['returns an object', () => ({}), 'got an object'],
      ['rejects', async () => Promise.reject(new Error('db down')), 'The keyGenerator failed: db down'],
    ])('a keyGenerator that %s fails the request with ERR_RATEKIT_KEY', async (_what, keyGenerator, message) => {
      const error: unknown = await Promise.resolve(stepsWith({ keyGenerator: keyGenerator as () => string }).decide(request())).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(RateKitError);
      expect(error).toMatchObject({ code: 'ERR_RATEKIT_KEY' });
      expect((error as Error).message).toContain(message);
    });

    it('a numeric key counts as its string, so 42 and "42" are one client', () => {
      const steps = stepsWith({ max: 1, keyGenerator: (req) => (req.headers['x-n'] === 'number' ? 42 : '42') });
      expect(steps.decide(request('1.1.1.1', { 'x-n': 'number' }))).toMatchObject({ key: '42', decision: { allowed: true } });
      expect(steps.decide(request('1.1.1.1'))).toMatchObject({ key: '42', decision: { allowed: false } });
    });
  });
});
