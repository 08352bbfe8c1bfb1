/**
 * The waits of the suites, one copy. A test waits for a condition (`until`), never for a time and then
 * for the best: a fixed `sleep` is for pacing what a test sends (a meter's interval), not for deciding
 * that something did not happen — assert an absence after a signal (a later message on the same topic, a
 * counter that moved).
 */

export const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

type Truthy<T> = Exclude<T, false | 0 | '' | null | undefined>;

/**
 * The first truthy value `check` gives, checked every `everyMs`; throws "timed out waiting for <what>"
 * once `timeoutMs` has passed without one.
 */
export async function until<T>(
  check: () => T | Promise<T>,
  timeoutMs = 10_000,
  what = 'condition',
  everyMs = 20,
): Promise<Truthy<T>> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value) return value as Truthy<T>;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(everyMs);
  }
}
