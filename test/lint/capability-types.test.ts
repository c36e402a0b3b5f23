import { join } from 'node:path';
import t from 'tap';
import ts from 'typescript';
import { REPO } from '../helpers/runnable.js';

// A vendor's `capabilities` are typed against the capability descriptors (the built-in areas',
// or a third-party area's through `serves`): the fixtures in test/fixtures/kit-types compile,
// or fail to, as each says. One program for all of them, so core is checked once.

const DIR = join(REPO, 'test', 'fixtures', 'kit-types');
const files = ['typed.ts', 'misspelt.ts', 'misspelt-beside.ts', 'wrong-signature.ts', 'wrong-signature-beside.ts'].map(
  (f) => join(DIR, f)
);
const program = ts.createProgram(files, {
  strict: true,
  module: ts.ModuleKind.NodeNext,
  moduleResolution: ts.ModuleResolutionKind.NodeNext,
  target: ts.ScriptTarget.ES2022,
  noEmit: true,
  skipLibCheck: true,
});

function errors(file: string): string[] {
  const sf = program.getSourceFile(join(DIR, file))!;
  return ts
    .getPreEmitDiagnostics(program, sf)
    .map((d) => `TS${d.code}: ${ts.flattenDiagnosticMessageText(d.messageText, '\n')}`);
}

t.test('built-in capabilities, a stream priced by usage and a third-party map compile', async (t) => {
  t.same(errors('typed.ts'), []);
});

t.test('a misspelt capability name does not compile', async (t) => {
  const e = errors('misspelt.ts');
  t.equal(e.length, 1, e.join('\n'));
  t.match(e[0], /^TS2353: .*'ai\.caht'+ does not exist/);
});

// TypeScript names no excess property of a returned object once one name fits the map:
// defineVendor's own check does, with a message naming the key (the last line of the chain).
t.test('a misspelt capability name beside a correct one does not compile, the arrow and the method', async (t) => {
  const e = errors('misspelt-beside.ts');
  t.equal(e.length, 2, e.join('\n'));
  for (const m of e) t.match(m, /^TS2322: [\s\S]*'"'ai\.caht' is not a capability of the map this vendor serves"'\.$/);
});

for (const file of ['wrong-signature.ts', 'wrong-signature-beside.ts']) {
  t.test(`a wrong signature does not compile (${file})`, async (t) => {
    const e = errors(file);
    t.equal(e.length, 1, e.join('\n'));
    t.match(e[0], /^TS2322: .*'ChatInput' is not assignable to type 'number'/s);
  });
}
