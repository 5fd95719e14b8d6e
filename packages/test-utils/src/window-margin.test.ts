import { askWithWindowMargin } from './window-margin.js';

describe('askWithWindowMargin', () => {
  it('keeps the first answer when its window has the margin left', async () => {
    const asked: string[] = [];
    const result = await askWithWindowMargin(async (id) => {
      asked.push(id);
      return { reset: Date.now() + 10_000 };
    }, 1_000);
    expect(asked).toEqual(['u0']);
    expect(result.identifier).toBe('u0');
  });

  it('near the end of a window, waits until its reset has passed and asks again for a new identifier', async () => {
    const asked: Array<{ id: string; at: number }> = [];
    let firstReset = 0;
    const result = await askWithWindowMargin(
      async (id) => {
        asked.push({ id, at: Date.now() });
        if (asked.length === 1) {
          firstReset = Date.now() + 30; // 30 ms left: less than the margin
          return { reset: firstReset };
        }
        return { reset: Date.now() + 10_000 };
      },
      1_000,
      'k',
    );
    expect(asked.map((a) => a.id)).toEqual(['k0', 'k1']);
    expect(asked[1]!.at).toBeGreaterThanOrEqual(firstReset); // the next window, not the one that was ending
    expect(result).toEqual({ identifier: 'k1', first: { reset: expect.any(Number) } });
  });
});
