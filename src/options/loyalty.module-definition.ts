import { ConfigurableModuleBuilder, Module } from '@nestjs/common';
import type { LoyaltyModuleOptions } from './loyalty-module-options.interface';

/** The injection token of the module's options. */
export const LOYALTY_MODULE_OPTIONS = Symbol('LOYALTY_MODULE_OPTIONS');

export const {
  ConfigurableModuleClass: LoyaltyOptionsConfigurableModule,
  ASYNC_OPTIONS_TYPE: LOYALTY_ASYNC_OPTIONS_TYPE,
} = new ConfigurableModuleBuilder<LoyaltyModuleOptions>({
  optionsInjectionToken: LOYALTY_MODULE_OPTIONS,
})
  .setClassMethodName('forRoot')
  // Global, so that each feature module reads the options without the host passing them down.
  .setExtras({}, (definition) => ({
    ...definition,
    global: true,
    exports: [...(definition.exports ?? []), LOYALTY_MODULE_OPTIONS],
  }))
  .build();

/** Holds the options given to LoyaltyModule.forRoot / forRootAsync, for every feature module. */
@Module({})
export class LoyaltyOptionsModule extends LoyaltyOptionsConfigurableModule {}
