import { ValidateBy, ValidationOptions } from 'class-validator';

/**
 * The longest aggregate id, in bytes of UTF-8 (README "Aggregate ids"). Bytes, not characters:
 * what the stores index and what a path carries. 256 keeps every id made under the old rule
 * (≤ 200 ASCII characters) valid, and leaves a projection's state key (≤ 1,024 bytes) room to
 * hold an id with a prefix.
 */
export const AGGREGATE_ID_MAX_BYTES = 256;

/** C0 controls, DEL and C1 controls (Unicode category Cc): never part of an id. */
const CONTROL = /[\u0000-\u001f\u007f-\u009f]/;
/** With the u flag a surrogate matches only when it is unpaired: text that is not valid Unicode. */
const LONE_SURROGATE = /\p{Cs}/u;

/**
 * Why `id` is not an aggregate id, or null. The rule (README "Aggregate ids"): any valid Unicode
 * text of 1 to AGGREGATE_ID_MAX_BYTES bytes of UTF-8 without a control character. Kept exactly as
 * sent: no normalisation (an NFC and an NFD spelling are two aggregates), no trimming.
 */
export function aggregateIdProblem(id: unknown): string | null {
  if (typeof id !== 'string') return 'must be a string';
  if (id.length === 0) return 'must not be empty';
  if (CONTROL.test(id)) return 'must not contain control characters (U+0000-U+001F, U+007F-U+009F)';
  if (LONE_SURROGATE.test(id)) return 'must be valid Unicode (an unpaired surrogate is not)';
  // A UTF-16 unit is at most 3 bytes of UTF-8: short ids skip the count.
  if (id.length * 3 > AGGREGATE_ID_MAX_BYTES) {
    const bytes = Buffer.byteLength(id, 'utf8');
    if (bytes > AGGREGATE_ID_MAX_BYTES) return `must be at most ${AGGREGATE_ID_MAX_BYTES} bytes of UTF-8 (this one is ${bytes})`;
  }
  return null;
}

/** The DTO form of the rule (class-validator), with the same messages. */
export function IsAggregateId(options?: ValidationOptions): PropertyDecorator {
  return ValidateBy(
    {
      name: 'isAggregateId',
      validator: {
        validate: (value: unknown) => aggregateIdProblem(value) === null,
        defaultMessage: (args) => `${args?.property ?? 'aggregateId'} ${aggregateIdProblem(args?.value) ?? 'is not a valid aggregate id'}`,
      },
    },
    options,
  );
}
