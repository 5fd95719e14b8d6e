// Small statistics used by every part. Pure functions; none mutates its input.

/** The median; the mean of the two middle values for an even count. NaN for an empty list. */
export function median(values) {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 === 1 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
}

export function min(values) {
  return values.length === 0 ? Number.NaN : Math.min(...values);
}

export function max(values) {
  return values.length === 0 ? Number.NaN : Math.max(...values);
}

/** (max − min) / median: how far a contender's own slice rates wander. */
export function spread(values) {
  return (max(values) - min(values)) / median(values);
}

/** `{ median, min, max }` of a list, the form every ratio is reported in. */
export function summary(values) {
  return { median: median(values), min: min(values), max: max(values) };
}

/** A seeded PRNG (mulberry32) so a shuffled order can be reproduced with `--seed`. */
export function seededRandom(seed) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296;
  };
}

/** A shuffled copy (Fisher–Yates). */
export function shuffled(items, random) {
  const out = [...items];
  for (let i = out.length - 1; i > 0; i--) {
    const j = Math.floor(random() * (i + 1));
    [out[i], out[j]] = [out[j], out[i]];
  }
  return out;
}
