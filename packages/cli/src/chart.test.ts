import { boundary, burst } from './patterns.js';
import { chartData, chartSpec, renderSvg } from './chart.js';
import { ALGORITHM_ORDER, simulate } from './simulate.js';

describe('chart data', () => {
  test('offered per bin by arrival, admitted per bin when they pass; a last point repeats the last bin', () => {
    const traffic = boundary({ limit: 3, windowMs: 1000, gapMs: 1 });
    const runs = simulate(traffic, ['fixed-window'], { limit: 3, windowMs: 1000 });
    const { points, spanMs } = chartData(traffic, runs, 500);
    expect(spanMs).toBe(2000);
    const series = (name: string) => points.filter((p) => p.series === name).map((p) => [p.t, p.requests]);
    expect(series('offered')).toEqual([
      [0, 1],
      [500, 3],
      [1000, 3],
      [1500, 0],
      [2000, 0],
    ]);
    expect(series('admitted')).toEqual([
      [0, 1],
      [500, 2],
      [1000, 3],
      [1500, 0],
      [2000, 0],
    ]);
  });

  test("delay's held requests count when they pass, and the chart stretches to the last pass", () => {
    const traffic = burst({ burst: 4, rate: 1, durationMs: 500 });
    const runs = simulate(traffic, ['delay'], { limit: 4, windowMs: 1000 });
    const { points, spanMs } = chartData(traffic, runs, 250);
    expect(spanMs).toBe(1000); // passes at 0, 250, 500, 750
    expect(points.filter((p) => p.series === 'admitted').map((p) => p.requests)).toEqual([1, 1, 1, 1, 1]);
  });

  test('one facet row per algorithm, in the order run', () => {
    const traffic = boundary({ limit: 2, windowMs: 1000, gapMs: 1 });
    const runs = simulate(traffic, ['gcra', 'fixed-window'], { limit: 2, windowMs: 1000 });
    const spec = chartSpec(traffic, runs, { binMs: 100, title: 'x' }) as { facet: { row: { sort: string[] } } };
    expect(spec.facet.row.sort).toEqual(['gcra', 'fixed-window']);
  });
});

describe('SVG', () => {
  const traffic = burst({ burst: 20, rate: 20, durationMs: 3000 });
  const runs = simulate(traffic, ALGORITHM_ORDER, { limit: 10, windowMs: 1000 });
  const options = { binMs: 100, title: traffic.description, subtitle: 'limit 10 per 1000 ms' };

  test('the same runs give the same bytes, render after render', async () => {
    const first = await renderSvg(traffic, runs, options);
    const second = await renderSvg(traffic, simulate(traffic, ALGORITHM_ORDER, { limit: 10, windowMs: 1000 }), options);
    expect(second).toBe(first);
  });

  test('an SVG document with one panel per algorithm, no ids, no dates', async () => {
    const svg = await renderSvg(traffic, runs, options);
    expect(svg).toMatch(/^<svg xmlns="http:\/\/www\.w3\.org\/2000\/svg"[^]*<\/svg>\n$/);
    for (const algorithm of ALGORITHM_ORDER) expect(svg).toContain(`>${algorithm}</text>`);
    expect(svg).not.toMatch(/\bid="/);
    expect(svg).not.toMatch(/\b20\d\d-\d\d-\d\d/);
  });
});
