/* global describe, it, expect */
// @package core
// A Worker as most Workers code is written: the limiter is made at module scope, when the isolate starts. workerd
// refuses a timer there ("Disallowed operation called within global scope"), so this checks that making a limiter
// and its memory store starts none, and that it then decides.
import { createLimiter, memoryStore } from '@ratekit/core';

const limiter = createLimiter({ store: memoryStore(), limits: { limit: 2, windowMs: 60_000 } });

describe('@ratekit/core made at module scope (memory store)', () => {
  it('lets the Worker start, then admits 2 and refuses the third', async () => {
    const seen = [];
    for (let i = 0; i < 3; i++) seen.push((await limiter.consume('client')).allowed);
    expect(seen).toEqual([true, true, false]);
  });
});
