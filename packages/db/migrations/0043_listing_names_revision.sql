-- What the in-memory listing remembers by catalog revision (a collection by its slug, the
-- attribute definitions its facets name) changes the revision when it changes, as a category's
-- slug does (migration 0001).
CREATE TRIGGER "collections_bump_catalog_revision"
  AFTER INSERT OR DELETE OR UPDATE OF "slug", "published", "sort" ON "collections"
  FOR EACH STATEMENT EXECUTE FUNCTION "bump_catalog_revision"();
--> statement-breakpoint
CREATE TRIGGER "attribute_definitions_bump_catalog_revision"
  AFTER INSERT OR DELETE OR UPDATE OF "key", "name", "owner", "filterable", "public", "type" ON "attribute_definitions"
  FOR EACH STATEMENT EXECUTE FUNCTION "bump_catalog_revision"();
