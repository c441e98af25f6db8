import { PipeTransform } from '@nestjs/common';
import { validationFailed } from '../common/domain-error';
import { AGGREGATE_ID_PATTERN, LIMITS } from './event-limits';
import { ERASURES_AGGREGATE_ID } from '../store/erasure.port';

/** An aggregate id path parameter, checked before the handler runs (VALIDATION_FAILED, field aggregateId). */
export class AggregateIdPipe implements PipeTransform<string, string> {
  transform(aggregateId: string): string {
    // The tenant's stream of erasures ($erased events) is read like any other (its DELETE and appends are refused).
    if (aggregateId === ERASURES_AGGREGATE_ID) return aggregateId;
    if (aggregateId.length > LIMITS.aggregateIdMax || !AGGREGATE_ID_PATTERN.test(aggregateId)) {
      throw validationFailed('aggregateId', 'is not a valid aggregate id');
    }
    return aggregateId;
  }
}
