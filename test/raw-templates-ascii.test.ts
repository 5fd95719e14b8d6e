// Every `String.raw` template in the packages' sources is 7-bit ASCII (issue 38 §2).
// Bun reads a non-ASCII character in a `String.raw` template as its `\uXXXX` escape, so the same source gives Node
// and Bun different text: for a Lua script, a different SHA-1 and a second copy on the server. The scripts the stores
// send are written this way, so the rule is kept for every such template, found by TypeScript's parser.
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import ts from 'typescript';

const root = path.resolve(__dirname, '..');

function rawTemplates(file: string): { line: number; text: string }[] {
  const source = ts.createSourceFile(file, readFileSync(path.join(root, file), 'utf8'), ts.ScriptTarget.Latest, true);
  const found: { line: number; text: string }[] = [];
  const visit = (node: ts.Node): void => {
    if (ts.isTaggedTemplateExpression(node) && node.tag.getText(source) === 'String.raw') {
      found.push({ line: source.getLineAndCharacterOfPosition(node.getStart(source)).line + 1, text: node.template.getText(source) });
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return found;
}

describe('String.raw templates', () => {
  const files = execFileSync('git', ['ls-files', 'packages/*/src/*.ts', 'packages/*/src/**/*.ts'], { cwd: root, encoding: 'utf8' }).trim().split('\n');
  const templates = files.flatMap((file) => rawTemplates(file).map((t) => ({ ...t, file })));

  it('are found (the Redis decision script is one)', () => {
    expect(templates.some((t) => t.file === 'packages/redis/src/lua.ts')).toBe(true);
  });

  it('hold no character outside ASCII', () => {
    const offending = templates.flatMap(({ file, line, text }) => {
      const chars = [...new Set(text.match(/[^ -~\t\n\r]/g) ?? [])];
      return chars.length > 0 ? [`${file}:${line} ${chars.join(' ')}`] : [];
    });
    expect(offending).toEqual([]);
  });
});
