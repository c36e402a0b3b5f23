import t from 'tap';
import { Type } from '@sinclair/typebox';
import { defineVendor } from '../../../../core/define.js';
import { declaredModels } from '../../../../plugins/ai/catalog/declared-models.js';
import { builtinVendors } from '../../../../vendors/builtin.js';

const row = {
  id: 'm-1',
  vendor: 'acme',
  family: 'm',
  tasks: ['general'],
  quality: 50,
  context_window: 1000,
  price: { in: 1, out: 2 },
};
const vendor = (extra: Record<string, unknown>) =>
  defineVendor({
    name: 'acme',
    configSchema: Type.Object({}),
    create: () => ({ capabilities: {} }),
    ...extra,
  });

t.test("a declared row is checked like the operator's, defaults filled in", async (t) => {
  const [m] = declaredModels([{ def: vendor({ models: [row] }) }]);
  t.same(m, { ...row, max_output: 4096, capabilities: ['chat'], regions: ['global'] });
  t.throws(() => declaredModels([{ def: vendor({ models: [{ ...row, quality: 'high' }] }) }]), /models\[0\]\.quality/);
});

t.test('rows filed under another name would never be found: a boot error', async (t) => {
  t.throws(
    () => declaredModels([{ def: vendor({ models: [{ ...row, vendor: 'openai' }] }) }]),
    /vendor adapter "acme": models\[0\]: model "m-1" says vendor "openai"; it must be "acme"/
  );
  const preset = { base_url: 'http://x', regions: ['global'], needs_key: false, models: [row] };
  t.throws(
    () => declaredModels([{ def: vendor({ presets: { local: preset } }) }]),
    /presets\.local\.models\[0\]: .* it must be "local"/
  );
  const local = { ...preset, models: [{ ...row, vendor: 'local' }] };
  t.equal(declaredModels([{ def: vendor({ presets: { local } }) }])[0].vendor, 'local');
});

t.test('each adapter declares its rows once, however many instances it has', async (t) => {
  const openai = builtinVendors.find((d) => d.name === 'openai')!;
  const once = declaredModels([{ def: openai }]);
  t.ok(once.length > 0);
  t.same(declaredModels([{ def: openai }, { def: openai }]), once);
  t.ok(once.every((m) => m.vendor === 'openai'));
  const compatible = declaredModels([{ def: builtinVendors.find((d) => d.name === 'openai-compatible')! }]);
  const presets = new Set(compatible.map((m) => m.vendor));
  t.ok(presets.has('deepseek') && presets.has('ollama'), "the presets' rows, under their names");
});
