import { IsInt, Max, Min, ValidateIf } from 'class-validator';

/**
 * Body of POST /projections/{id}/webhook/resume: `{}` resumes from the oldest undelivered
 * notification, `{"afterSequence": N}` after N (to accept a gap CURSOR_EXPIRED reported). Like the
 * replay body, it must be a JSON object.
 */
export class ResumeWebhookDto {
  @ValidateIf((o: { afterSequence?: unknown }) => o.afterSequence !== undefined)
  @IsInt({ message: 'afterSequence must be a non-negative integer' })
  @Min(0, { message: 'afterSequence must be a non-negative integer' })
  @Max(Number.MAX_SAFE_INTEGER, { message: `afterSequence must be at most ${Number.MAX_SAFE_INTEGER}` })
  afterSequence?: number;
}
