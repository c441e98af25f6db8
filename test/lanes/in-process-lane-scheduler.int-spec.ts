import { InProcessLaneScheduler } from '../../src/lanes/in-process-lane-scheduler';
import { testLaneScheduler } from './lane-scheduler.conformance';

testLaneScheduler('in-process', (handler, options) => new InProcessLaneScheduler(handler, options));
