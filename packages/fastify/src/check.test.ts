import { memoryStore, RateKitError, type RateLimitStore } from '@ratekit/core';
import type { FastifyRequest } from 'fastify';
import { type Check, createCheck, type Outcome } from './check.js';
import { resolveRegistration } from './options.js';
import type { RateLimitPluginOptions } from './types.js';

const T0 = Date.UTC(2026, 10, 21, 12, 0, 0);
let t = T0;
const now = () => t;

function checkWith(options: RateLimitPluginOptions, store: RateLimitStore = memoryStore({ pruneIntervalMs: 0 })): Check {
  const { settings } = resolveRegistration(options, () => {});
  return createCheck(settings, { store, namespace: 'test:', now, onError: () => {} });
}

function request(ip = '203.0.113.7', headers: Record<string, string> = {}): FastifyRequest {
  return { ip, headers } as unknown as FastifyRequest;
}

/** Runs a timeline: at each second offset, one counted check; returns what each got. */
function run(check: Check, seconds: number[]): string[] {
  return seconds.map((s) => {
    t = T0 + s * 1000;
    return summary(check(request(), true) as Outcome);
  });
}

function summary(outcome: Outcome): string {
  if (outcome.kind !== 'refused') return outcome.kind;
  return `${outcome.banned ? 'banned' : 'refused'} ${Math.ceil(outcome.decision.retryAfterMs / 1000)}s`;
}

beforeEach(() => {
  t = T0;
});

describe('createCheck', () => {
  describe('with max 2 per 10 seconds (the defaults otherwise)', () => {
    it('admits two requests per window, synchronously, and refuses the third until the window ends', () => {
      const check = checkWith({ max: 2, timeWindow: '10 seconds' });
      // time (s):                       0          1          2            9.5          10
      expect(run(check, [0, 1, 2, 9.5, 10])).toEqual(['allowed', 'allowed', 'refused 8s', 'refused 1s', 'allowed']);
    });
  });

  describe('peeking (increment: false)', () => {
    it('reports what a counted request would get and charges nothing', () => {
      const check = checkWith({ max: 1, timeWindow: 10_000 });
      const peek = check(request(), false) as Outcome;
      expect(peek).toMatchObject({ kind: 'allowed', decision: { remaining: 1, cost: 1 } });
      expect((check(request(), true) as Outcome).kind).toBe('allowed');
      expect((check(request(), false) as Outcome).kind).toBe('refused');
      expect((check(request(), false) as Outcome).kind).toBe('refused');
    });
  });

  describe('with ban', () => {
    it('ban 2: the first two refusals in the window are 429s, the rest are bans until the window ends', () => {
      const check = checkWith({ max: 1, timeWindow: '10 seconds', ban: 2 });
      // time (s):                        0          1            2            3           4            11
      expect(run(check, [0, 1, 2, 3, 4, 11])).toEqual(['allowed', 'refused 9s', 'refused 8s', 'banned 7s', 'banned 6s', 'allowed']);
    });

    it('ban 0: the first refusal is already a ban', () => {
      const check = checkWith({ max: 1, timeWindow: '10 seconds', ban: 0 });
      expect(run(check, [0, 1])).toEqual(['allowed', 'banned 9s']);
    });

    it('ban -1 (the default): never a ban', () => {
      const check = checkWith({ max: 1, timeWindow: '10 seconds' });
      expect(run(check, [0, 1, 2, 3, 4, 5])).toEqual(['allowed', 'refused 9s', 'refused 8s', 'refused 7s', 'refused 6s', 'refused 5s']);
    });

    it('peeking tells whether the next refusal would be a ban, without counting it', () => {
      const check = checkWith({ max: 1, timeWindow: '10 seconds', ban: 1 });
      run(check, [0, 1]); // allowed, then one 429
      expect(check(request(), false)).toMatchObject({ kind: 'refused', banned: true });
      expect(check(request(), false)).toMatchObject({ kind: 'refused', banned: true });
    });
  });

  describe('with continueExceeding', () => {
    it('restarts the window at each refused attempt, so a client that keeps trying stays refused', () => {
      const check = checkWith({ max: 1, timeWindow: '10 seconds', continueExceeding: true });
      // Without it the window of t=0 would end at 10 s. Each refusal restarts it: 5 → 15, 12 → 22.
      // time (s):                         0          5             12            23
      expect(run(check, [0, 5, 12, 23])).toEqual(['allowed', 'refused 10s', 'refused 10s', 'allowed']);
    });

    it('leaves a peek alone: only counted refusals restart the window', () => {
      const check = checkWith({ max: 1, timeWindow: '10 seconds', continueExceeding: true });
      run(check, [0]);
      t = T0 + 5_000;
      expect(summary(check(request(), false) as Outcome)).toBe('refused 5s');
      expect(run(check, [10])).toEqual(['allowed']);
    });
  });

  describe('with max as a function of the request and key', () => {
    it('asks it per request (it may be async) and limits by its answer', async () => {
      const seen: string[] = [];
      const check = checkWith({
        timeWindow: 60_000,
        max: async (req, key) => {
          seen.push(key);
          return req.headers['x-plan'] === 'pro' ? 3 : 1;
        },
      });
      const pro = () => check(request('198.51.100.1', { 'x-plan': 'pro' }), true) as Promise<Outcome>;
      const free = () => check(request('198.51.100.2'), true) as Promise<Outcome>;
      expect((await Promise.all([pro(), pro(), pro(), pro()])).map(summary)).toEqual(['allowed', 'allowed', 'allowed', 'refused 60s']);
      expect((await Promise.all([free(), free()])).map(summary)).toEqual(['allowed', 'refused 60s']);
      expect(seen.slice(0, 2)).toEqual(['198.51.100.1', '198.51.100.1']);
    });

    it('fails the request with a coded error when it answers something other than an integer >= 1', () => {
      const check = checkWith({ max: () => 0 });
      expect(() => check(request(), true)).toThrow(expect.objectContaining({ code: 'ERR_RATEKIT_INVALID_OPTION', option: 'max(request, key)' }));
    });
  });

  describe('with an allowList', () => {
    it('an array: listed keys are neither counted nor refused', () => {
      const check = checkWith({ max: 1, allowList: ['203.0.113.7'] });
      expect([check(request(), true), check(request(), true)]).toEqual([
        { kind: 'allowListed', key: '203.0.113.7' },
        { kind: 'allowListed', key: '203.0.113.7' },
      ]);
      expect((check(request('198.51.100.9'), true) as Outcome).kind).toBe('allowed');
    });

    it('a function of the request and key (it may be async)', async () => {
      const check = checkWith({ max: 1, allowList: async (_req, key) => key.startsWith('10.') });
      expect(await check(request('10.0.0.1'), true)).toEqual({ kind: 'allowListed', key: '10.0.0.1' });
      expect((await check(request('192.0.2.1'), true)).kind).toBe('allowed');
    });
  });

  describe('keys', () => {
    it('groups IPv6 clients by /56 by default, as core does', () => {
      const check = checkWith({ max: 1 });
      expect(check(request('2001:db8:1234:5678::1'), true)).toMatchObject({ kind: 'allowed', key: '2001:db8:1234:5600::/56' });
      expect(check(request('2001:db8:1234:56ff::2'), true)).toMatchObject({ kind: 'refused', key: '2001:db8:1234:5600::/56' });
    });

    it('lets a request without an IP through unlimited, reporting it once', () => {
      const reports: string[] = [];
      const { settings } = resolveRegistration({ max: 1 }, (message) => reports.push(message));
      const check = createCheck(settings, { store: memoryStore({ pruneIntervalMs: 0 }), namespace: '', now, onError: () => {} });
      expect([check(request(''), true), check(request(''), true)]).toEqual([{ kind: 'unkeyed' }, { kind: 'unkeyed' }]);
      expect(reports).toHaveLength(1);
      expect(reports[0]).toContain('request.ip');
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
    ])('a keyGenerator that %s fails the request with ERR_RATEKIT_KEY', (_what, keyGenerator, message) => {
      const check = checkWith({ keyGenerator: keyGenerator as () => string });
      let error: unknown;
      try {
        void check(request(), true); // the key generator fails synchronously, before any store call
      } catch (e) {
        error = e;
      }
      expect(error).toBeInstanceOf(RateKitError);
      expect(error).toMatchObject({ code: 'ERR_RATEKIT_KEY' });
      expect((error as Error).message).toContain(message);
    });

    it('a keyGenerator that rejects fails the request with ERR_RATEKIT_KEY', async () => {
      const check = checkWith({ keyGenerator: async () => Promise.reject(new Error('db down')) });
      await expect(check(request(), true)).rejects.toMatchObject({ code: 'ERR_RATEKIT_KEY', message: '[ratekit] The keyGenerator failed: db down' });
    });

    it('a numeric key counts as its string, so 42 and "42" are one client', () => {
      const check = checkWith({ max: 1, keyGenerator: (req) => (req.headers['x-n'] === 'number' ? 42 : '42') });
      expect(check(request('1.1.1.1', { 'x-n': 'number' }), true)).toMatchObject({ kind: 'allowed', key: '42' });
      expect(check(request('1.1.1.1'), true)).toMatchObject({ kind: 'refused', key: '42' });
    });
  });
});
