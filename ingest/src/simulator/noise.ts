/** Deterministic noise: a hash of (seed, instant, channel), so a reading never depends on call order. */

function mix(x: number): number {
  let h = x | 0;
  h = Math.imul(h ^ (h >>> 16), 0x7feb352d);
  h = Math.imul(h ^ (h >>> 15), 0x846ca68b);
  return (h ^ (h >>> 16)) >>> 0;
}

export function hashString(s: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < s.length; i++) h = Math.imul(h ^ s.charCodeAt(i), 0x01000193);
  return h >>> 0;
}

/** Uniform in [0, 1). */
export function uniform(seed: number, t: number, channel: number): number {
  const lo = t % 0x100000000;
  const hi = Math.floor(t / 0x100000000);
  return mix(mix(mix(seed ^ channel) ^ lo) ^ hi) / 0x100000000;
}

/** Roughly normal with mean 0 and standard deviation 1 (Irwin–Hall of three). */
export function gauss(seed: number, t: number, channel: number): number {
  return (
    (uniform(seed, t, channel) + uniform(seed, t, channel + 101) + uniform(seed, t, channel + 202) - 1.5) * 2
  );
}
