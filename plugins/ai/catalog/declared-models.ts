import { ConfigError, validateSection } from '../../../config/load.js';
import { ModelEntrySchema, type ModelEntry, type VendorDefinition } from '../../../core/kit/area.js';

// Checked once per definition: the built-in rows are the same objects in every app a process builds.
const checked = new WeakMap<VendorDefinition, ModelEntry[]>();

function rowsOf(def: VendorDefinition): ModelEntry[] {
  let rows = checked.get(def);
  if (rows) return rows;
  const where = `vendor adapter "${def.name}"`;
  const own = (def.models ?? []).map((m, i) => checkRow(m, def.name, `${where}: models[${i}]`));
  const presets = Object.entries(def.presets ?? {}).flatMap(([name, p]) =>
    (p.models ?? []).map((m, i) => checkRow(m, name, `${where}: presets.${name}.models[${i}]`))
  );
  rows = [...own, ...presets];
  checked.set(def, rows);
  return rows;
}

/**
 * A declared row, checked like the operator's (defaults filled in), and keyed as the planner
 * looks it up: an adapter's rows under its name, a preset's under the preset's. A row keyed
 * otherwise would never be found, so it is a boot error rather than a model that is not there.
 */
function checkRow(row: unknown, vendor: string, where: string): ModelEntry {
  const m = validateSection<ModelEntry>(ModelEntrySchema, row, where.replace(/: /, '.'));
  if (m.vendor !== vendor) {
    throw new ConfigError(`${where}: model "${m.id}" says vendor "${m.vendor}"; it must be "${vendor}"`);
  }
  return m;
}

/** The catalog rows the adapters in use declare, each adapter once, in the order they were configured. */
export function declaredModels(instances: ReadonlyArray<{ def: VendorDefinition }>): ModelEntry[] {
  return [...new Set(instances.map((i) => i.def))].flatMap(rowsOf);
}
