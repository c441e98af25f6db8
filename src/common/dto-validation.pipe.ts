import { PipeTransform } from '@nestjs/common';
import { validateSync, ValidationError } from 'class-validator';
import { compileDtoCheck, CompiledDtoCheck } from './compiled-dto-check';
import { DomainError, validationFailed } from './domain-error';

type DtoClass<T> = (new () => T) & { NESTED?: Record<string, new () => unknown> };

/** A wrong type is the root cause: report it before range or pattern complaints about the same field. */
const TYPE_CONSTRAINTS = ['isDefined', 'isString', 'isInt', 'isObject', 'isArray'];

function firstProblem(errors: ValidationError[], prefix = ''): { field: string; message: string } | null {
  for (const e of errors) {
    const field = prefix ? `${prefix}.${e.property}` : e.property;
    if (e.constraints) {
      const kind = TYPE_CONSTRAINTS.find((k) => e.constraints![k]);
      const msg = kind ? e.constraints[kind] : Object.values(e.constraints)[0];
      return { field, message: msg.startsWith(e.property) ? msg.slice(e.property.length).trim() : msg };
    }
    const nested = e.children?.length ? firstProblem(e.children, field) : null;
    if (nested) return nested;
  }
  return null;
}

/**
 * Checks a JSON body against a class-validator DTO without class-transformer: the body is only
 * read, never deep-copied, which matters on the append path. Unknown fields are ignored.
 * Array fields named in the DTO's NESTED map are checked element by element.
 */
export function validateDto<T extends object>(dto: DtoClass<T>, body: unknown, prefix = ''): T {
  if (body === null || typeof body !== 'object' || Array.isArray(body)) {
    throw new DomainError('VALIDATION_FAILED', `${prefix || 'body'} must be a JSON object`, { field: prefix || 'body' });
  }
  const instance = Object.assign(new dto(), body);
  // A body the compiled rules accept is valid; any other is refused by validateSync, which says why.
  const problem = checkOf(dto)?.(instance) ? null : firstProblem(validateSync(instance, { forbidUnknownValues: false }));
  if (problem) {
    const field = prefix ? `${prefix}.${problem.field}` : problem.field;
    throw validationFailed(field, problem.message);
  }
  for (const [field, elementDto] of Object.entries(dto.NESTED ?? {})) {
    const items = (instance as Record<string, unknown>)[field] as unknown[];
    items.forEach((item, i) => validateDto(elementDto as DtoClass<object>, item, `${prefix ? prefix + '.' : ''}${field}[${i}]`));
  }
  return instance;
}

/** Each DTO's rules compiled once, on first use (null: the DTO needs validateSync every time). */
const compiledChecks = new Map<DtoClass<object>, CompiledDtoCheck | null>();

function checkOf(dto: DtoClass<object>): CompiledDtoCheck | null {
  let check = compiledChecks.get(dto);
  if (check === undefined) compiledChecks.set(dto, (check = compileDtoCheck(dto)));
  return check;
}

export interface DtoPipeOptions {
  /**
   * Read a body that is not a JSON object (absent, null, an array, a scalar) as `{}`, so that it is
   * refused by the DTO's own first required field rather than as a whole: for routes whose answer
   * to such a body was that field's error before they had a DTO.
   */
  nonObjectAsEmpty?: boolean;
}

export class DtoValidationPipe<T extends object> implements PipeTransform<unknown, T> {
  constructor(
    /** Public: the OpenAPI document takes the request body's schema from the class this pipe validates with. */
    readonly dto: DtoClass<T>,
    private readonly options: DtoPipeOptions = {},
  ) {}
  transform(value: unknown): T {
    const isObject = value !== null && typeof value === 'object' && !Array.isArray(value);
    return validateDto(this.dto, !isObject && this.options.nonObjectAsEmpty ? {} : value);
  }
}
