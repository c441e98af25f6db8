import { IsNotEmpty, IsString, ValidateIf } from 'class-validator';

/**
 * Body of PUT /aggregate-types/{type}: the reducer upload to bind, and which of its reducers when
 * it holds several. Checked in this order (reducerId first), as the contract's errors name them.
 */
export class BindAggregateTypeDto {
  @IsString({ message: 'reducerId is required' })
  @IsNotEmpty({ message: 'reducerId is required' })
  reducerId!: string;

  // Present it must be a string: `null` is refused, not read as "no class named".
  @ValidateIf((o: { className?: unknown }) => o.className !== undefined)
  @IsString({ message: 'className must be a string' })
  className?: string;
}
