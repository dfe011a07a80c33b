// The one error mapper: AppError → its JSON shape; anything else → a 500 that leaks nothing, logged in full.
// A 5xx AppError (a dependency down) is logged in full too: its cause says what failed.
import type { Logger } from '@aws-lambda-powertools/logger';
import { AppError } from '../../domain/errors';
import type { ApiMiddleware } from '../http/context';
import { errorResponse } from '../http/response';

export function errorMapper(logger: Logger): ApiMiddleware {
  return {
    onError: (request) => {
      const { error } = request;
      if (error instanceof AppError && error.status >= 500) {
        logger.error('request failed', error);
      } else if (error instanceof AppError) {
        logger.debug('request refused', { status: error.status, code: error.code });
      } else {
        logger.error('unhandled error', error as Error);
      }
      request.response = errorResponse(error);
    },
  };
}
