import { PipeTransform } from '@nestjs/common';
import { validationFailed } from '../common/domain-error';
import { AGGREGATE_ID_PATTERN, LIMITS } from './event-limits';

/** An aggregate id path parameter, checked before the handler runs (VALIDATION_FAILED, field aggregateId). */
export class AggregateIdPipe implements PipeTransform<string, string> {
  transform(aggregateId: string): string {
    if (aggregateId.length > LIMITS.aggregateIdMax || !AGGREGATE_ID_PATTERN.test(aggregateId)) {
      throw validationFailed('aggregateId', 'is not a valid aggregate id');
    }
    return aggregateId;
  }
}
