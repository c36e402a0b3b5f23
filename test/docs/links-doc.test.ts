import t from 'tap';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

// Relative links between the docs (and their #anchors) must lead somewhere.

const root = fileURLToPath(new URL('../../', import.meta.url));
const pages = [
  ...readdirSync(join(root, 'docs'))
    .filter((f) => f.endsWith('.md'))
    .map((f) => join(root, 'docs', f)),
  join(root, 'BENCHMARKS.md'),
];

/** GitHub's anchor of a heading: lower case, punctuation dropped, spaces to dashes. */
const slug = (heading: string) =>
  heading
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{N} _-]/gu, '')
    .replace(/ /g, '-');

function anchors(file: string): Set<string> {
  const text = readFileSync(file, 'utf8').replace(/```[\s\S]*?```/g, '');
  return new Set([...text.matchAll(/^#{1,6} (.+)$/gm)].map((m) => slug(m[1])));
}

for (const page of pages) {
  t.test(page.slice(root.length), async (t) => {
    const text = readFileSync(page, 'utf8').replace(/```[\s\S]*?```/g, '');
    for (const [, target] of text.matchAll(/\]\(([^)\s]+)\)/g)) {
      if (/^[a-z]+:/.test(target)) continue; // external
      const [path, anchor] = target.split('#');
      const file = path ? resolve(dirname(page), path) : page;
      t.ok(existsSync(file), `${target}: the file exists`);
      if (anchor && file.endsWith('.md') && existsSync(file))
        t.ok(anchors(file).has(anchor), `${target}: the heading exists`);
    }
  });
}
