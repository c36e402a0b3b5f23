/** A rolling window of how late jobs started (claim time minus run_at), for percentiles. */
export class LatenessWindow {
  private readonly samples: number[] = [];
  private next = 0;

  constructor(private readonly size = 2048) {}

  add(ms: number): void {
    const v = Math.max(0, ms);
    if (this.samples.length < this.size) this.samples.push(v);
    else this.samples[this.next] = v;
    this.next = (this.next + 1) % this.size;
  }

  summary(): { samples: number; p50: number; p99: number; max: number } {
    const s = [...this.samples].sort((a, b) => a - b);
    const at = (q: number) => (s.length ? s[Math.min(s.length - 1, Math.ceil(q * s.length) - 1)] : 0);
    return { samples: s.length, p50: at(0.5), p99: at(0.99), max: s.length ? s[s.length - 1] : 0 };
  }
}
