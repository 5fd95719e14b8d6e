/**
 * The rule: a test that expects a refusal to last must make its first request where the window it lands in has
 * time to spare. A fixed window ends on the store's grid, not when the test chooses, so a test that happened to
 * start a few ms before a window's end would see its refusal turn into a success: a flake, not a bug.
 *
 * {@link askWithWindowMargin} asks once; if the window the answer names (its `reset`, ms since the epoch by the
 * server's clock) ends within `marginMs`, it waits until that reset has passed (the condition, not a guessed
 * time) and asks again, with a new identifier, in the next window.
 *
 * @module
 */

/**
 * Makes a test's first request where its window has at least `marginMs` left.
 *
 * @param ask - makes the request for the identifier it is given (`${base}${attempt}`) and returns its answer
 * @param marginMs - the time the test needs the window to last, in ms, with the test's own margin in it
 * @param base - the identifier's stem
 * @returns the identifier asked for last and its answer
 * @example
 * const { identifier, first } = await askWithWindowMargin((id) => ratelimit.limit(id), 2_000);
 */
export async function askWithWindowMargin<R extends { reset: number }>(ask: (identifier: string) => Promise<R>, marginMs: number, base = 'u'): Promise<{ identifier: string; first: R }> {
  for (let attempt = 0; ; attempt++) {
    const identifier = `${base}${attempt}`;
    const first = await ask(identifier);
    if (first.reset - Date.now() >= marginMs) return { identifier, first };
    await new Promise((resolve) => setTimeout(resolve, Math.max(0, first.reset - Date.now()) + 1));
  }
}
