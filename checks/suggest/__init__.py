"""``lookout suggest``'s engine: a table's profile → typed checks → one automation file.

``profile`` what was observed (``sampling`` how large tables are read);
``relations`` foreign-key candidates; ``margins`` the bounds' room for normal
variation; ``rules`` the checks suggested; ``goals`` a goal and instructions
written by the LLM, every number verified against the profile;
``yaml_writer`` the file's text; ``written`` the diff and the overwrite rule;
``source_pass`` one pass over a source. docs/suggest.md says all of it.
"""
