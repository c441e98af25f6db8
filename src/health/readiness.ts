import { constant, JsonSchema, object } from '../common/json-schema';

/**
 * GET /health/ready: each check contributes one section of the answer and may hold readiness back.
 * Checks are plain objects so that later ones (the store, Redis) are added in health.module.ts only.
 */
export interface ReadinessCheck {
  /** The answer's key for this check's section. */
  readonly name: string;
  check(): Promise<{ ready: boolean; detail: unknown }> | { ready: boolean; detail: unknown };
}

export interface ReadinessReport {
  status: 'ready' | 'not-ready';
  [section: string]: unknown;
}

export class Readiness {
  constructor(private readonly checks: ReadinessCheck[]) {}

  async report(): Promise<ReadinessReport> {
    const results = await Promise.all(this.checks.map(async (c) => ({ name: c.name, ...(await c.check()) })));
    const report: ReadinessReport = { status: results.every((r) => r.ready) ? 'ready' : 'not-ready' };
    for (const r of results) report[r.name] = r.detail;
    return report;
  }
}

/** GET /health (the contract's answer). */
export const HEALTH_SCHEMA: JsonSchema = object({ status: constant('ok') });

/** GET /health/ready: 200 ready or 503 not-ready, with one section per check (what it found). */
export const READINESS_SCHEMA: JsonSchema = object(
  { status: { enum: ['ready', 'not-ready'] } },
  {},
  { additionalProperties: { description: "a check's section" } },
);
