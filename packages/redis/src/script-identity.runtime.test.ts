// One script, one SHA-1, one function library on every runtime (issue 38 §2).
// A fleet that mixes Node, Bun, Deno and Workers instances shares one copy of each script in Redis only if every
// runtime sends the same bytes. Bun once read `String.raw` templates holding `×` and `µ` as `\u00D7`-style escapes,
// so its script text, SHA-1 and library name differed from Node's. The scripts are ASCII now, and this file, run by
// jest on Node and by the runtime matrix on Bun, Deno and workerd, pins the identity every runtime must compute.
// When a script changes on purpose, update the constants below (jest on Node prints the new values).
import { DECISION_BATCH_SCRIPT, DECISION_BATCH_SCRIPT_SHA, DECISION_CODE, DECISION_FUNCTION, DECISION_LIBRARY, DECISION_SCRIPT, DECISION_SCRIPT_SHA } from '@ratekit/redis';
import { scriptSha } from '@ratekit/redis/upstash';

const EXPECTED = {
  scriptSha: 'a7b729307690d2450f19a295171af4523f96d4cd',
  batchScriptSha: 'bfe9ab6defd9261721aaba7c8b45cae36e2b1365',
  functionName: 'ratekit_f4e1208df56321e8',
};

/** The first character outside 7-bit ASCII, with its position, or undefined. */
function firstNonAscii(text: string): string | undefined {
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i);
    if (code > 0x7f) return `U+${code.toString(16).toUpperCase().padStart(4, '0')} at ${i}: …${text.slice(Math.max(0, i - 30), i + 1)}`;
  }
  return undefined;
}

describe('the Redis scripts are the same bytes on every runtime', () => {
  it('every script text is ASCII, so no runtime can read it differently', () => {
    for (const text of [DECISION_CODE, DECISION_SCRIPT, DECISION_BATCH_SCRIPT, DECISION_LIBRARY]) {
      expect(firstNonAscii(text)).toBeUndefined();
    }
  });

  it('the EVALSHA hashes are the ones Node computes', () => {
    expect(DECISION_SCRIPT_SHA).toBe(EXPECTED.scriptSha);
    expect(DECISION_BATCH_SCRIPT_SHA).toBe(EXPECTED.batchScriptSha);
  });

  it('the function library has the name Node gives it', () => {
    expect(DECISION_FUNCTION).toBe(EXPECTED.functionName);
  });

  it("the edge subpath's Web Crypto hash is the same script's", async () => {
    expect(await scriptSha()).toBe(EXPECTED.scriptSha);
  });
});
