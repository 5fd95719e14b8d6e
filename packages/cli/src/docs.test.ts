/**
 * docs/choosing-an-algorithm.md shows pictures and tables made by `pnpm simulate`. This runs every
 * `pnpm simulate …` line of the page again, in memory, and checks that the committed SVG has the
 * same bytes and that the page shows the summary the command prints now. After changing an
 * algorithm or the chart, run the page's commands again and commit the pictures.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { main } from './cli.js';

const root = join(__dirname, '..', '..', '..');
const page = readFileSync(join(root, 'docs', 'choosing-an-algorithm.md'), 'utf8');
const commands = [...page.matchAll(/^pnpm simulate (--pattern .*)$/gm)].map((match) => match[1]!.split(/\s+/));

test('the page has a command for each picture it shows, all six algorithms in each', () => {
  const pictures = [...page.matchAll(/!\[[^\]]*\]\((choosing-an-algorithm\/[a-z-]+\.svg)\)/g)].map((match) => `docs/${match[1]}`);
  expect(pictures.length).toBeGreaterThanOrEqual(3);
  expect(commands.map((args) => args[args.indexOf('--svg') + 1])).toEqual(pictures);
  for (const args of commands) expect(args).not.toContain('--algorithms');
});

describe.each(commands.map((args) => [args.join(' '), args] as const))('pnpm simulate %s', (_line, args) => {
  test('the committed picture is what the command draws now, byte for byte; the page shows its summary', async () => {
    let stdout = '';
    const written = new Map<string, string>();
    const code = await main(['simulate', ...args], {
      stdout: (text) => (stdout += text),
      stderr: (text) => {
        throw new Error(text);
      },
      writeText: async (path, text) => {
        written.set(path, text);
      },
    });
    expect(code).toBe(0);
    const svgPath = args[args.indexOf('--svg') + 1]!;
    expect(written.get(svgPath)).toBe(readFileSync(join(root, svgPath), 'utf8'));
    expect(page).toContain(`\`\`\`text\n${stdout.trimEnd()}\n\`\`\``);
  });
});

test("the README's example is what the command prints", async () => {
  const readme = readFileSync(join(root, 'packages', 'cli', 'README.md'), 'utf8');
  const [, line, output] = /```text\n\$ ratekit (simulate [^\n]*)\n([^]*?)```/.exec(readme)!;
  let stdout = '';
  const code = await main(line!.split(' '), { stdout: (text) => (stdout += text), stderr: (text) => (stdout += text) });
  expect(code).toBe(0);
  expect(stdout).toBe(output);
});
