// Usage plans where there is no API Gateway: the local runtime's limiter (DynamoDB window) is the only one,
// so an account needs no usage identity.
import type { UsagePlans } from '../../app/ports';

export const noUsagePlans: UsagePlans = {
  enroll: async () => ({}),
  move: async () => {},
};
