/**
 * The closing lines every bench prints: each target with its figure and PASS or FAIL, then one
 * overall line. A failed target sets the process exit code to 1, so a bench can fail a CI step.
 *
 *   const v = new Verdict('rest');
 *   v.atLeast('ratio flow / bare req/s', ratio, 0.6);
 *   v.atMost('flow p99 latency', p99, 25, 'ms');
 *   v.print();
 */
export interface Check {
  what: string;
  figure: number;
  target: number;
  op: '≥' | '≤';
  unit: string;
  pass: boolean;
}

function show(n: number, unit: string): string {
  const abs = Math.abs(n);
  const digits = abs >= 1000 ? 0 : abs >= 10 ? 1 : abs >= 1 ? 2 : 3;
  return `${n.toLocaleString('en-US', { maximumFractionDigits: digits, minimumFractionDigits: digits })}${unit ? ` ${unit}` : ''}`;
}

export class Verdict {
  readonly checks: Check[] = [];
  constructor(readonly bench: string) {}

  /** figure ≥ target passes. A NaN figure (nothing measured) fails. */
  atLeast(what: string, figure: number, target: number, unit = ''): boolean {
    return this.add({ what, figure, target, op: '≥', unit, pass: figure >= target });
  }

  /** figure ≤ target passes. A NaN figure (nothing measured) fails. */
  atMost(what: string, figure: number, target: number, unit = ''): boolean {
    return this.add({ what, figure, target, op: '≤', unit, pass: figure <= target });
  }

  get passed(): boolean {
    return this.checks.length > 0 && this.checks.every((c) => c.pass);
  }

  /** Prints one line per target and the overall verdict; a FAIL sets process.exitCode = 1. */
  print(): void {
    console.log(`\n${this.bench}: targets`);
    const width = Math.max(...this.checks.map((c) => c.what.length), 10);
    for (const c of this.checks) {
      console.log(`  ${c.pass ? 'PASS' : 'FAIL'}  ${c.what.padEnd(width)}  ${show(c.figure, c.unit).padStart(14)}   target ${c.op} ${show(c.target, c.unit)}`);
    }
    const failed = this.checks.filter((c) => !c.pass);
    if (this.passed) console.log(`${this.bench}: PASS (${this.checks.length} of ${this.checks.length} targets met)`);
    else {
      console.log(`${this.bench}: FAIL (${failed.length} of ${this.checks.length} targets missed${failed.length ? `: ${failed.map((c) => c.what).join('; ')}` : ''})`);
      process.exitCode = 1;
    }
  }

  private add(c: Check): boolean {
    this.checks.push(c);
    return c.pass;
  }
}
