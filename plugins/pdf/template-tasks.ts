// What the PDF area runs in its template worker threads (core/isolation/worker-pool.ts): filling a
// template, whose cost the template and its variables choose (sections nested over long lists
// multiply: four levels over 100 items is 100^4 passes), so it must never run on the event loop
// and must always be stoppable. Loaded by path in the thread; the area imports only its types.

type Mustache = typeof import('mustache').default;
let lib: Promise<Mustache> | undefined;

export const tasks = {
  async render(i: { html: string; vars: Record<string, unknown> }): Promise<string> {
    lib ??= import('mustache').then((m) => {
      const mustache = (m.default ?? m) as Mustache;
      // Its cache keeps every template it ever parsed: a thread's heap would grow with them.
      mustache.templateCache = undefined;
      return mustache;
    });
    return (await lib).render(i.html, i.vars);
  },
};
