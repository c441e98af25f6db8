import { IsInt, Max, Min, ValidateIf } from 'class-validator';

/**
 * Body of POST /projections/{id}/webhook/deliveries/replay: `{}` replays every dead-lettered
 * delivery of the projection, `{"sequence": N}` that one. The body must be a JSON object: an
 * array, a string, `null` or no body at all is refused (400), never read as "replay all".
 */
export class ReplayDeliveriesDto {
  // Absent is "all"; present it must be a number (`null` is no sequence: refused, not read as "all").
  @ValidateIf((o: { sequence?: unknown }) => o.sequence !== undefined)
  @IsInt({ message: 'sequence must be a positive integer' })
  @Min(1, { message: 'sequence must be a positive integer' })
  @Max(Number.MAX_SAFE_INTEGER, { message: `sequence must be at most ${Number.MAX_SAFE_INTEGER}` })
  sequence?: number;
}
