// "Changing the import is the whole migration", for TypeScript: type-tests/app.ts, an app typed against
// @upstash/ratelimit 2.2.0, compiles as is (against the incumbent) and with its specifier changed to
// '@ratekit/upstash' (against this package's source), under `strict`.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import ts from 'typescript';

const packageDir = join(__dirname, '..');
const appPath = join(packageDir, 'type-tests', 'app.ts');

function diagnostics(source: string): string[] {
  const file = join(packageDir, 'type-tests', 'compiled-app.ts');
  const options: ts.CompilerOptions = {
    strict: true,
    noEmit: true,
    target: ts.ScriptTarget.ES2022,
    module: ts.ModuleKind.ESNext,
    moduleResolution: ts.ModuleResolutionKind.Bundler,
    lib: ['lib.es2022.d.ts', 'lib.dom.d.ts'],
    types: [],
    skipLibCheck: true,
    baseUrl: packageDir,
    paths: { '@ratekit/upstash': ['src/index.ts'], '@ratekit/core': ['../core/src/index.ts'], '@ratekit/redis/transport': ['../redis/src/transport.ts'] },
  };
  const host = ts.createCompilerHost(options);
  const getSourceFile = host.getSourceFile.bind(host);
  host.getSourceFile = (name, version, ...rest) => (name === file ? ts.createSourceFile(name, source, version) : getSourceFile(name, version, ...rest));
  const fileExists = host.fileExists.bind(host);
  host.fileExists = (name) => name === file || fileExists(name);
  const program = ts.createProgram([file], options, host);
  // The app's own errors (other packages' sources are checked by their own builds, with their own settings).
  return ts
    .getPreEmitDiagnostics(program)
    .filter((d) => d.file === undefined || d.file.fileName === file)
    .map((d) => `${d.file?.fileName ?? ''}: ${ts.flattenDiagnosticMessageText(d.messageText, '\n')}`);
}

describe('an app typed against @upstash/ratelimit', () => {
  const app = readFileSync(appPath, 'utf8');

  it('compiles against @upstash/ratelimit 2.2.0 (it is valid incumbent code)', () => {
    expect(diagnostics(app)).toEqual([]);
  });

  it('compiles against @ratekit/upstash with only the import changed', () => {
    const ours = app.replaceAll("from '@upstash/ratelimit'", "from '@ratekit/upstash'");
    expect(ours).not.toBe(app);
    expect(diagnostics(ours)).toEqual([]);
  });
});
