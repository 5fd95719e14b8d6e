// What the HTTP part loads: per framework, the bare server, one empty
// middleware, a minimal limiter (the floor), ratekit's adapter, the incumbent and
// rate-limiter-flexible's minimal middleware (the cheapest peer), each passing (limit 1e9)
// and refusing (limit 1 per hour). One server process per row; the scripts are
// in bench/http-servers/.

const SERVERS = new URL('../http-servers/', import.meta.url);

/** The id of every framework's reference row. */
export const BARE = 'bare';

/**
 * A row. `expect`: what every response should be: `plain` (200, no
 * rate-limit headers), `pass` (200 with them), `reject` (429 once the probe
 * has spent the one allowed request). `ours`: a ratekit row, judged against
 * the targets; `passId`: the pass row a reject row is compared with.
 */
function row(framework, id, { limiter, scenario = '', script, arg, expect, ours = false, reference = false, passId, dropInFloor = false, limitHeader = 'x-ratelimit-limit', runtime = 'node' }) {
  return { id, framework, limiter, scenario, script: new URL(`${script}.mjs`, SERVERS).pathname, arg, expect, ours, reference, passId, dropInFloor, limitHeader, runtime };
}

/** What the `noop` row is called where it is not a middleware. */
const NOOP_LABELS = { fastify: 'no-op hook', 'nestjs-express': 'no-op guard', 'nestjs-fastify': 'no-op guard' };

/**
 * Bare, no-op, then pass and reject rows for each limiter `[idPrefix, label, script, argPrefix, ours, dropInFloor, limitHeader]`.
 * `limitHeader`: the header carrying the limit, which the probe checks (default `X-RateLimit-Limit`; hono-rate-limiter
 * sends draft-6 `RateLimit-Limit` only). `options.scripts`: the prefix of the bare script (default the framework's name);
 * `options.runtime`: `'node'` or `'bun'`, the program every server of the framework runs on.
 * `dropInFloor`: a reference row, the cheapest peer plus what the incumbent's contract adds, which our
 * rows are also read against (not a peer: never the one to beat).
 */
function framework(name, limiters, { scripts = name, runtime = 'node' } = {}) {
  const rt = { runtime };
  const rows = [
    row(name, BARE, { limiter: 'bare', script: `${scripts}-bare`, arg: 'bare', expect: 'plain', reference: true, ...rt }),
    // The method's self-check: an identical bare server measured as a row. Its Δ is the schedule's own offset.
    row(name, 'bare2', { limiter: 'bare, 2nd process', script: `${scripts}-bare`, arg: 'bare', expect: 'plain', reference: true, ...rt }),
    row(name, 'noop', { limiter: NOOP_LABELS[name] ?? 'no-op middleware', script: `${scripts}-bare`, arg: 'noop', expect: 'plain', reference: true, ...rt }),
    // The floor of a limiter with the adapters' default headers (lib/http-minimal.mjs): not judged, read the adapters against it.
    row(name, 'minimal', { limiter: 'minimal limiter (floor)', script: `${scripts}-bare`, arg: 'minimal', expect: 'pass', reference: true, ...rt }),
    // The same refusing every request (limit 1) the framework's own way (Fastify: through its error handling, as the
    // adapters must): the floor of a refusal, read beside the minimal pass.
    row(name, 'minimal-reject', {
      limiter: 'minimal limiter (floor), refusing',
      scenario: 'reject',
      script: `${scripts}-bare`,
      arg: 'minimal-reject',
      expect: 'reject',
      reference: true,
      passId: 'minimal',
      ...rt,
    }),
  ];
  for (const [prefix, label, script, argPrefix, ours, dropInFloor = false, limitHeader = undefined] of limiters) {
    const kind = { ours, reference: dropInFloor, dropInFloor, limitHeader, ...rt };
    rows.push(row(name, `${prefix}-pass`, { limiter: label, scenario: 'pass', script, arg: `${argPrefix}pass`, expect: 'pass', ...kind }));
    rows.push(row(name, `${prefix}-reject`, { limiter: label, scenario: 'reject', script, arg: `${argPrefix}reject`, expect: 'reject', passId: `${prefix}-pass`, ...kind }));
  }
  return { name, rows };
}

/** Every framework and its rows, in table order. */
export const FRAMEWORKS = [
  framework('express', [
    ['ratekit', '@ratekit/express', 'express-ratekit', '', true],
    ['ratekit-core', '@ratekit/express, ratekit mode', 'express-ratekit', 'core-', true],
    ['incumbent', 'express-rate-limit', 'express-express-rate-limit', '', false],
    ['rlflex', 'rate-limiter-flexible, minimal middleware', 'express-rate-limiter-flexible', '', false],
    // The same middleware with only its import changed to @ratekit/flexible (issue 32; read against `rlflex`).
    ['flexible', '@ratekit/flexible, the same middleware', 'express-rate-limiter-flexible', 'flexible-', false],
    // What express-rate-limit's contract adds to that middleware (req.rateLimit, the Date header): the floor of a drop-in.
    ['rlflex-dropin', 'floor of a drop-in: rate-limiter-flexible, minimal, + req.rateLimit and Date', 'express-rate-limiter-flexible', 'dropin-', false, true],
  ]),
  framework('fastify', [
    ['ratekit', '@ratekit/fastify', 'fastify-ratekit', '', true],
    ['incumbent', '@fastify/rate-limit', 'fastify-fastify-rate-limit', '', false],
    ['rlflex', 'rate-limiter-flexible, minimal hook', 'fastify-rate-limiter-flexible', '', false],
  ]),
  framework('koa', [
    ['ratekit', '@ratekit/koa', 'koa-ratekit', '', true],
    ['incumbent', 'koa-ratelimit', 'koa-koa-ratelimit', '', false],
    ['rlflex', 'rate-limiter-flexible, minimal middleware', 'koa-rate-limiter-flexible', '', false],
  ]),
  // Hono 4 on Node (@hono/node-server) and on Bun (Bun.serve), the same scripts (lib/http-hono.mjs): the
  // drop-in and ratekit mode against hono-rate-limiter, which sends draft-6 headers only.
  ...[
    ['hono', 'node'],
    ['hono-bun', 'bun'],
  ].map(([name, runtime]) =>
    framework(
      name,
      [
        ['ratekit', '@ratekit/hono, rateLimiter (drop-in)', 'hono-ratekit', '', true, false, 'ratelimit-limit'],
        ['ratekit-core', '@ratekit/hono, rateLimit (ratekit mode)', 'hono-ratekit', 'core-', true, false, 'ratelimit-limit'],
        ['incumbent', 'hono-rate-limiter', 'hono-hono-rate-limiter', '', false, false, 'ratelimit-limit'],
      ],
      { scripts: 'hono', runtime },
    ),
  ),
  // NestJS 11 on each of its platforms (lib/http-nest.mjs): the bare row is a bare Nest app, the
  // no-op and minimal rows are global guards, and the limiters are throttler guards.
  ...['express', 'fastify'].map((platform) =>
    framework(`nestjs-${platform}`, [
      ['ratekit', '@ratekit/nestjs', `nestjs-${platform}-ratekit`, '', true],
      ['ratekit-core', '@ratekit/nestjs, ratekit mode', `nestjs-${platform}-ratekit`, 'core-', true],
      ['incumbent', '@nestjs/throttler', `nestjs-${platform}-throttler`, '', false],
    ]),
  ),
];

/**
 * The rows `--variants` selects: an entry names a framework (`koa`), a row
 * id in every framework (`ratekit-pass`), or one row (`koa/ratekit-pass`).
 * The bare row of a framework always runs, and a framework runs when any of
 * its rows is selected.
 */
export function selectRows(variants) {
  const out = [];
  for (const fw of FRAMEWORKS) {
    const chosen = fw.rows.filter((r) => r.id === BARE || variants === undefined || variants.includes(fw.name) || variants.includes(r.id) || variants.includes(`${fw.name}/${r.id}`));
    if (chosen.length > 1) out.push({ name: fw.name, rows: chosen });
  }
  return out;
}

/** The sanity problems of a probe (one request before any load, two for a reject row), or []. */
export function probeProblems(r, first, second) {
  const problems = [];
  const limitHeader = first.headers[r.limitHeader ?? 'x-ratelimit-limit'];
  if (first.status !== 200 || first.body !== 'hello world') problems.push(`probe: ${first.status} ${JSON.stringify(first.body.slice(0, 40))}`);
  if (r.expect === 'plain' && limitHeader !== undefined) problems.push(`probe: unexpected ${r.limitHeader} ${limitHeader}`);
  if (r.expect === 'pass' && limitHeader !== '1000000000') problems.push(`probe: ${r.limitHeader} ${limitHeader}, expected 1000000000`);
  if (r.expect === 'reject') {
    if (limitHeader !== '1') problems.push(`probe: ${r.limitHeader} ${limitHeader}, expected 1`);
    if (second === undefined || second.status !== 429) problems.push(`second probe: ${second?.status}, expected 429`);
    else if (second.headers['retry-after'] === undefined) problems.push('second probe: 429 without Retry-After');
  }
  return problems;
}

/** The sanity problems of one load slice, or []. */
export function sliceProblems(r, slice) {
  const problems = [];
  const expected = r.expect === 'reject' ? '429' : '200';
  const other = Object.entries(slice.statusCounts).filter(([code]) => code !== expected);
  if (other.length > 0) problems.push(`${other.map(([code, n]) => `${n}× ${code}`).join(', ')} (expected ${expected})`);
  if (slice.errors > 0 || slice.timeouts > 0) problems.push(`${slice.errors} errors, ${slice.timeouts} timeouts`);
  if (slice.responses === 0) problems.push('no responses');
  return problems;
}
