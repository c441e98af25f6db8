import { arrayOf, constant, object, string } from '../common/json-schema';

/**
 * GET /health/ready: each check contributes one section of the answer and may hold readiness back.
 * Checks are plain objects so that later ones are added in health.module.ts only.
 */
export interface ReadinessCheck {
  /** The answer's key for this check's section. */
  readonly name: string;
  check(): Promise<CheckResult> | CheckResult;
}

export interface CheckResult {
  ready: boolean;
  /**
   * Ready, but something this instance offers works less well (e.g. Redis down: lanes wait, quotas
   * count per instance). An instance that can append and serve reads stays in the load balancer:
   * taking every instance out for a dependency they all share would stop the whole service.
   */
  degraded?: boolean;
  detail: unknown;
}

export interface ReadinessReport {
  status: 'ready' | 'not-ready';
  /** The sections holding readiness back, by name (only when not ready). */
  failing?: string[];
  /** The sections that are degraded, by name (only when some are); their sections say what is lost. */
  degraded?: string[];
  [section: string]: unknown;
}

/**
 * A check that has not answered within this is failed with that reason: an orchestrator's probe
 * has its own timeout (often 1 s), and a store that hangs must read as not ready, not as no answer.
 */
export const CHECK_DEADLINE_MS = 2_000;

export class Readiness {
  constructor(
    private readonly checks: ReadinessCheck[],
    private readonly deadlineMs = CHECK_DEADLINE_MS,
  ) {}

  async report(): Promise<ReadinessReport> {
    const results = await Promise.all(this.checks.map(async (c) => ({ name: c.name, ...(await this.run(c)) })));
    const failing = results.filter((r) => !r.ready).map((r) => r.name);
    const degraded = results.filter((r) => r.ready && r.degraded).map((r) => r.name);
    const report: ReadinessReport = failing.length ? { status: 'not-ready', failing } : { status: 'ready' };
    if (degraded.length) report.degraded = degraded;
    for (const r of results) report[r.name] = r.detail;
    return report;
  }

  private async run(c: ReadinessCheck): Promise<CheckResult> {
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<CheckResult>((resolve) => {
      timer = setTimeout(() => resolve({ ready: false, detail: { error: `no answer within ${this.deadlineMs} ms` } }), this.deadlineMs);
    });
    try {
      return await Promise.race([Promise.resolve().then(() => c.check()), late]);
    } catch (e) {
      return { ready: false, detail: { error: e instanceof Error ? e.message : String(e) } };
    } finally {
      clearTimeout(timer);
    }
  }
}

/** GET /health (the contract's answer). */
export const HEALTH_SCHEMA = object({ status: constant('ok') });

/** GET /health/live: the process serves. */
export const LIVENESS_SCHEMA = object({ status: constant('live') });

/** GET /health/ready: 200 ready or 503 not-ready, with one section per check (what it found). */
export const READINESS_SCHEMA = object(
  { status: { enum: ['ready', 'not-ready'] } },
  {
    failing: arrayOf(string(), { description: 'the checks holding readiness back (when not ready)' }),
    degraded: arrayOf(string(), {
      description:
        'dependencies that are down without stopping appends and reads (e.g. redis); their sections say what is degraded (effects)',
    }),
  },
  { additionalProperties: { description: "a check's section" } },
);
