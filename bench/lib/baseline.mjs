// The baseline of every in-memory part: the least an in-memory limiter can do
// per decision (bench/notes/method.md §1): read the clock, Map.get the count, Map.set
// it back, compare with the limit.

const NEVER = 1e12;

/** `{ decide(key) → boolean, map }`: a fresh Map<string, number> and its decision. */
export function mapBaseline() {
  const map = new Map();
  const decide = (key) => {
    const nowMs = Date.now();
    const used = (map.get(key) ?? 0) + 1;
    map.set(key, used);
    return used <= NEVER && nowMs > 0;
  };
  return { decide, map };
}

/** The same decision as an `async` function: what a Promise-returning API pays. */
export function asyncMapBaseline() {
  const map = new Map();
  const decide = async (key) => {
    const nowMs = Date.now();
    const used = (map.get(key) ?? 0) + 1;
    map.set(key, used);
    return used <= NEVER && nowMs > 0;
  };
  return { decide, map };
}
