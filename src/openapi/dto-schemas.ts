import { Type } from '@nestjs/common';
import { targetConstructorToSchema } from 'class-validator-jsonschema';
import { JsonSchema } from '../common/json-schema';

export const SCHEMA_REF_PREFIX = '#/components/schemas/';

/**
 * A request DTO's JSON Schema, made by class-validator-jsonschema from the very decorators the
 * DtoValidationPipe validates with: the document holds no second copy of a DTO.
 */
export function dtoSchema(dto: Type<object>): JsonSchema {
  return targetConstructorToSchema(dto, { refPointerPrefix: SCHEMA_REF_PREFIX }) as JsonSchema;
}

/** The DTO and the element DTOs its pipe checks array items against (`static NESTED`), recursively. */
export function dtoClosure(dto: Type<object>, into = new Map<string, Type<object>>()): Map<string, Type<object>> {
  if (into.has(dto.name)) return into;
  into.set(dto.name, dto);
  const nested = (dto as { NESTED?: Record<string, Type<object>> }).NESTED ?? {};
  for (const element of Object.values(nested)) dtoClosure(element, into);
  return into;
}
