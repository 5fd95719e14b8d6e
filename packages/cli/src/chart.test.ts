import { boundary } from './patterns.js';
import { renderSvg } from './chart.js';
import { simulate } from './simulate.js';

test('smoke', async () => {
  const traffic = boundary({ limit: 3, windowMs: 1000, gapMs: 1 });
  const runs = simulate(traffic, ['fixed-window'], { limit: 3, windowMs: 1000 });
  const svg = await renderSvg(traffic, runs, { binMs: 100, title: 't' });
  expect(svg.startsWith('<svg')).toBe(true);
});
