// Keys as the peer benchmark makes them: IPv4-like strings, one per client.

/** The i-th IPv4-like key, `10.x.y.z` (distinct for i < 2²⁴). */
export function ipv4Key(i) {
  return `10.${(i >>> 16) & 255}.${(i >>> 8) & 255}.${i & 255}`;
}

/** `count` distinct pre-made keys; one key is the hot-key scenario. */
export function makeKeys(count) {
  const keys = new Array(count);
  for (let i = 0; i < count; i++) keys[i] = ipv4Key(i + 1);
  return keys;
}
