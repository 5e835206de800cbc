import { ConfigurableModuleBuilder } from '@nestjs/common';
import type { LoyaltyModuleOptions } from './loyalty-module-options.interface';

export const {
  ConfigurableModuleClass: LoyaltyConfigurableModule,
  MODULE_OPTIONS_TOKEN: LOYALTY_MODULE_OPTIONS,
  OPTIONS_TYPE: LOYALTY_OPTIONS_TYPE,
  ASYNC_OPTIONS_TYPE: LOYALTY_ASYNC_OPTIONS_TYPE,
} = new ConfigurableModuleBuilder<LoyaltyModuleOptions>().setClassMethodName('forRoot').build();
