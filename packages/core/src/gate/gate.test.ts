import type { Decision } from '../decision.js';
import { RateKitError } from '../errors.js';
import { partitionKey } from '../headers/index.js';
import { createGate, DELAY_HEADER, type GateAdapter, type GateDecided, type GateOutcome } from './gate.js';
import type { GateOptions } from './options.js';

/** A request as a test adapter sees it: its X-Forwarded-For only. */
interface Req {
  readonly xff?: string;
  readonly user?: string;
}

const T0 = 1_700_000_000_000;
const adapter: GateAdapter<Req> = { name: 'rateLimit()', standardHeaders: 'draft-8', forwardedFor: (r) => r.xff };

function gateOf(options: GateOptions<Req> = {}, at = T0) {
  return createGate<Req>({ now: () => at, ...options }, adapter);
}

/** The outcome of a decision that the test knows was synchronous. */
function now(outcome: GateOutcome | Promise<GateOutcome>): GateOutcome {
  if (outcome instanceof Promise) throw new Error('expected a synchronous outcome');
  return outcome;
}

function decided(outcome: GateOutcome): GateDecided {
  if (outcome.key === undefined) throw new Error('expected a decision');
  return outcome;
}

const field = (outcome: GateDecided, name: string) => outcome.headers.find(([n]) => n === name)?.[1];

describe('the gate: one request pipeline for every adapter', () => {
  describe('a decision per request', () => {
    it('decides synchronously with the memory store, a synchronous key and no skip: no Promise, no microtask', () => {
      const gate = gateOf({ limit: 2 });
      const outcomes = [1, 2, 3].map(() => decided(now(gate.decide({}, '192.0.2.1'))));
      expect(outcomes.map((o) => o.decision.allowed)).toEqual([true, true, false]);
      expect(outcomes.map((o) => o.key)).toEqual(['192.0.2.1', '192.0.2.1', '192.0.2.1']);
    });

    it('lets a request through unlimited, with no headers, when skip says so or keyGenerator returns false', async () => {
      const skipping = gateOf({ skip: () => true });
      expect(await skipping.decide({}, '192.0.2.1')).toEqual({ key: undefined, decision: undefined, headers: undefined });
      const keyless = gateOf({ keyGenerator: () => false });
      expect(now(keyless.decide({}, undefined)).key).toBeUndefined();
    });

    it('takes a finite number as its decimal key, and refuses other returns with ERR_RATEKIT_KEY', async () => {
      expect(now(gateOf({ keyGenerator: () => 42 }).decide({}, undefined)).key).toBe('42');
      for (const bad of ['', null, Number.NaN, {}]) {
        const gate = gateOf({ keyGenerator: () => bad as never });
        await expect(gate.decide({}, undefined)).rejects.toMatchObject({ code: 'ERR_RATEKIT_KEY' });
      }
    });

    it('wraps a throwing or rejecting keyGenerator as ERR_RATEKIT_KEY, keeping the cause; it never throws synchronously', async () => {
      const boom = new Error('no session');
      const throwing = gateOf({
        keyGenerator: () => {
          throw boom;
        },
      });
      const outcome = throwing.decide({}, undefined);
      expect(outcome).toBeInstanceOf(Promise);
      await expect(outcome).rejects.toMatchObject({ code: 'ERR_RATEKIT_KEY', message: '[ratekit] The keyGenerator failed: no session', cause: boom });
      const rejecting = gateOf({ keyGenerator: () => Promise.reject(boom) });
      await expect(rejecting.decide({}, undefined)).rejects.toMatchObject({ code: 'ERR_RATEKIT_KEY', cause: boom });
    });

    it('passes the client address to keyGenerator', () => {
      const seen: Array<string | undefined> = [];
      const gate = gateOf({ keyGenerator: (_r, address) => (seen.push(address), 'k') });
      now(gate.decide({}, '198.51.100.4'));
      expect(seen).toEqual(['198.51.100.4']);
    });

    it('splits into key and decideFor for an adapter acting on the key first; together they are decide', async () => {
      const gate = gateOf({ limit: 1 });
      expect(gate.key({}, '192.0.2.1')).toBe('192.0.2.1');
      expect(decided(now(gate.decideFor({}, '192.0.2.1'))).decision.allowed).toBe(true);
      expect(decided(now(gate.decide({}, '192.0.2.1'))).decision.allowed).toBe(false);
      expect(gate.decideFor({}, false)).toEqual({ key: undefined, decision: undefined, headers: undefined });
      await expect(gate.key({}, undefined)).rejects.toMatchObject({ code: 'ERR_RATEKIT_KEY' });
    });
  });

  describe('the default key: the client address, trusted proxies, IPv6 subnets', () => {
    it('groups IPv6 clients by /56 by default, and by ipv6Subnet when given', () => {
      expect(now(gateOf().decide({}, '2001:db8:1:2ff:3::1')).key).toBe('2001:db8:1:200::/56');
      expect(now(gateOf({ ipv6Subnet: 64 }).decide({}, '2001:db8:1:2ff:3::1')).key).toBe('2001:db8:1:2ff::/64');
    });

    it('ignores X-Forwarded-For unless trustProxy names the connection a proxy of ours', () => {
      const spoofed = { xff: '203.0.113.9' };
      expect(now(gateOf().decide(spoofed, '10.0.0.1')).key).toBe('10.0.0.1');
      expect(now(gateOf({ trustProxy: 1 }).decide(spoofed, '10.0.0.1')).key).toBe('203.0.113.9');
    });

    it('fails with ERR_RATEKIT_KEY when there is no address, never falling back to a header', async () => {
      await expect(gateOf({ trustProxy: 1 }).decide({ xff: '203.0.113.9' }, undefined)).rejects.toMatchObject({ code: 'ERR_RATEKIT_KEY' });
    });
  });

  describe("an adapter's names for the options it translates", () => {
    const koaLike: GateAdapter<Req> = { ...adapter, optionNames: { statusCode: 'status', limit: 'max', prefix: 'namespace' } };
    it.each([
      [{ statusCode: 600 }, 'status', 'an integer from 400 to 599'],
      [{ limit: 0 }, 'max', 'a positive finite number'],
      [{ prefix: 'a\u0000b' }, 'namespace', 'a string without NUL characters'],
      [{ windowMs: -1 }, 'windowMs', 'a positive finite number of milliseconds'],
    ] as const)('%j fails naming `%s`, with the gate’s rule', (options, option, expected) => {
      expect(() => createGate<Req>(options as GateOptions<Req>, koaLike)).toThrow(expect.objectContaining({ name: 'RateKitOptionError', option, expected: expect.stringContaining(expected) }));
    });
    it('leaves a path inside `limits` as it is', () => {
      expect(() => createGate<Req>({ limits: [{ limit: 0, windowMs: 1_000 }] }, koaLike)).toThrow(expect.objectContaining({ option: 'limits[0].limit' }));
    });
  });

  describe('headers', () => {
    it('gives each request the partition key of its own key (draft-8 pk), built in one place', () => {
      const gate = gateOf({ limit: 10 });
      const a = decided(now(gate.decide({}, '192.0.2.1')));
      const b = decided(now(gate.decide({}, '192.0.2.2')));
      expect(field(a, 'RateLimit-Policy')).toContain(`pk=:${partitionKey('192.0.2.1')}:`);
      expect(field(b, 'RateLimit-Policy')).toContain(`pk=:${partitionKey('192.0.2.2')}:`);
      expect(field(a, 'RateLimit')).toContain('r=9');
    });

    it('sets Retry-After on a refusal only', () => {
      const gate = gateOf({ limit: 1, windowMs: 10_000 });
      expect(field(decided(now(gate.decide({}, '192.0.2.1'))), 'Retry-After')).toBeUndefined();
      expect(field(decided(now(gate.decide({}, '192.0.2.1'))), 'Retry-After')).toBe('10');
    });

    it('shows a held pass’s wait, in whole ms, in X-Slow-Down-Delay', () => {
      const gate = gateOf({ algorithm: 'delay', limit: 1, windowMs: 1_000 });
      const first = decided(now(gate.decide({}, '192.0.2.1')));
      const second = decided(now(gate.decide({}, '192.0.2.1')));
      expect(field(first, DELAY_HEADER)).toBeUndefined();
      expect(second.decision.allowed).toBe(true);
      expect(field(second, DELAY_HEADER)).toBe('1000');
    });

    it('sends nothing when every header is off', () => {
      const gate = gateOf({ limit: 1, standardHeaders: false });
      now(gate.decide({}, '192.0.2.1'));
      expect(decided(now(gate.decide({}, '192.0.2.1'))).headers).toEqual([]);
    });
  });

  describe('the refusal body', () => {
    it('is express-rate-limit’s text by default, else message, or what its function returns', async () => {
      const refused = { allowed: false } as Decision;
      expect(await gateOf().refusalBody({}, refused)).toBe('Too many requests, please try again later.');
      expect(await gateOf({ message: { error: 'slow down' } }).refusalBody({}, refused)).toEqual({ error: 'slow down' });
      expect(await gateOf({ message: (r) => `bye ${r.user ?? ''}` }).refusalBody({ user: 'ann' }, refused)).toBe('bye ann');
      expect(gateOf({ statusCode: 503 }).statusCode).toBe(503);
    });
  });

  describe('onDecision: background work', () => {
    it('hands its Promise to waitUntil and returns nothing to await', async () => {
      const handed: Array<Promise<unknown>> = [];
      let finish = () => undefined as void;
      const gate = gateOf({ onDecision: () => new Promise<void>((resolve) => (finish = resolve)) });
      const outcome = decided(now(gate.decide({}, '192.0.2.1')));
      expect(gate.observe(outcome, {}, (p) => handed.push(p))).toBeUndefined();
      expect(handed).toHaveLength(1);
      finish();
      await handed[0];
    });

    it('returns its work to await where there is no waitUntil, and reports a failure to onError, never rejecting', async () => {
      const errors: RateKitError[] = [];
      const gate = gateOf({ onDecision: () => Promise.reject(new Error('metrics down')), onError: (e) => errors.push(e) });
      const outcome = decided(now(gate.decide({}, '192.0.2.1')));
      await gate.observe(outcome, {}, undefined);
      expect(errors.map((e) => e.message)).toEqual(['[ratekit] background work failed: metrics down']);
    });

    it('reports a synchronous throw too, and gives the hook the decision, the context and the key', () => {
      const errors: RateKitError[] = [];
      const seen: unknown[] = [];
      const gate = gateOf({
        onDecision: (d, r, key) => {
          seen.push(d.allowed, r.user, key);
          throw new RateKitError('ERR_RATEKIT_STORE', 'sink down');
        },
        onError: (e) => errors.push(e),
      });
      expect(gate.observe(decided(now(gate.decide({ user: 'ann' }, '192.0.2.1'))), { user: 'ann' }, undefined)).toBeUndefined();
      expect(seen).toEqual([true, 'ann', '192.0.2.1']);
      expect(errors.map((e) => e.code)).toEqual(['ERR_RATEKIT_STORE']);
    });
  });

  describe('writeHeaders: the fields through the framework', () => {
    const write = (standardHeaders: GateOptions<Req>['standardHeaders'], withAppend = true) => {
      const gate = gateOf({ standardHeaders, legacyHeaders: true });
      const calls: string[] = [];
      const set = (into: string[], name: string) => into.push(`set ${name}`);
      const append = (into: string[], name: string) => into.push(`append ${name}`);
      gate.writeHeaders(decided(now(gate.decide({}, '192.0.2.1'))).headers, calls, set, withAppend ? append : undefined);
      return calls;
    };

    it('appends the draft-8+ list fields and sets every other field, in order', () => {
      expect(write('draft-8')).toEqual(['set X-RateLimit-Limit', 'set X-RateLimit-Remaining', 'set X-RateLimit-Reset', 'append RateLimit', 'append RateLimit-Policy']);
    });

    it('sets the single-valued draft-6 and draft-7 fields', () => {
      expect(write('draft-7').filter((call) => call.startsWith('append'))).toEqual([]);
      expect(write(true).filter((call) => call.startsWith('append'))).toEqual([]);
    });

    it('sets every field when no append is given', () => {
      expect(write('draft-8', false).filter((call) => call.startsWith('append'))).toEqual([]);
      expect(write('draft-8', false)).toContain('set RateLimit');
    });
  });
});
