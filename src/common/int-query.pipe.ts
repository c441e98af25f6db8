import { PipeTransform } from '@nestjs/common';
import { parseIntParam } from './int-param';

/**
 * A non-negative integer query parameter, checked by `parseIntParam` before the handler runs, so
 * readers take numbers. Absent or empty is `whenAbsent` (undefined: the parameter is optional).
 */
export class IntQueryPipe<D extends number | undefined = number> implements PipeTransform<string | undefined, number | D> {
  // Public: the OpenAPI document describes the parameter from the pipe that checks it.
  constructor(
    readonly name: string,
    readonly whenAbsent: D,
    readonly min = 0,
    readonly max = Number.MAX_SAFE_INTEGER,
  ) {}

  transform(raw: string | undefined): number | D {
    if (raw === undefined || raw === '') return this.whenAbsent;
    return parseIntParam(this.name, raw, 0, this.min, this.max);
  }
}
