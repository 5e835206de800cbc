import { SetMetadata } from '@nestjs/common';

export const IS_PUBLIC = 'loyalty:isPublic';

/** Opts a resolver or route out of the access-token guard, which otherwise denies. */
export const Public = (): MethodDecorator & ClassDecorator => SetMetadata(IS_PUBLIC, true);
