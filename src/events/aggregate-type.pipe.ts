import { PipeTransform } from '@nestjs/common';
import { validationFailed } from '../common/domain-error';
import { AGGREGATE_TYPE_PATTERN } from '../common/event-limits';

/** An aggregate type path parameter, checked before the handler runs (VALIDATION_FAILED, field type). */
export class AggregateTypePipe implements PipeTransform<string, string> {
  transform(type: string): string {
    if (type.length > 100 || !AGGREGATE_TYPE_PATTERN.test(type)) throw validationFailed('type', 'is not a valid aggregate type');
    return type;
  }
}
