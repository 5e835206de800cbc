import { Extensions } from '@nestjs/graphql';

/** Marker put in a field's GraphQL extensions; strict mode removes every field that has it. */
export const PRODUCT_EXTENSION = 'loyaltyProductExtension';

/**
 * Marks a field as an extension beyond the base contract (docs/api.md, Extensions and strict mode),
 * so that strict mode can hide it and leave exactly the base schema.
 */
export const ExtensionField = (): MethodDecorator & PropertyDecorator =>
  Extensions({ [PRODUCT_EXTENSION]: true });
