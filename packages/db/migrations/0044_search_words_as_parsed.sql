-- A search's words as a tsquery of prefixes ('red sho' -> 'red':* & 'sho':*), taken from the same
-- parser that wrote the products' words (to_tsvector 'simple'), so a word it splits ('2e4kq' into
-- '2e4' and 'kq') or keeps whole ('3.5') is looked for as it was stored. The first eight words;
-- none (no letter or digit): null, which matches nothing. PL/pgSQL keeps its statement's plan for
-- the session (a SQL function's would be planned again at every execution: 94 µs against 22).
CREATE FUNCTION "prefix_tsquery"(search text) RETURNS tsquery LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE AS $$
BEGIN
  RETURN (SELECT string_agg('''' || replace(replace(lexeme, '\', '\\'), '''', '''''') || ''':*', ' & ')::tsquery
    FROM (SELECT lexeme FROM unnest(to_tsvector('simple', search)) ORDER BY positions[1] LIMIT 8) words);
END
$$;
