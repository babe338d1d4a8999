"""Which ``SHOW GRANTS`` lines let a MySQL or MariaDB role write (``mysql_grants``)."""

from __future__ import annotations

from checks.sources.mysql_grants import write_grants

ACCOUNT = "roley@127.0.0.1"


def test_each_privilege_beyond_reading_is_named_with_where_it_holds() -> None:
    lines = [
        "GRANT `writer_role` TO `roley`@`127.0.0.1`",
        "GRANT FILE ON *.* TO `roley`@`127.0.0.1`",
        "GRANT SELECT, SHOW VIEW ON `shop`.* TO `roley`@`127.0.0.1`",
        "GRANT SELECT (`a`, `b`), UPDATE (`email`) ON `shop`.`customers` TO `roley`@`127.0.0.1`",
        "GRANT USAGE ON *.* TO `writer_role`",
        "GRANT INSERT ON `shop`.`orders` TO `writer_role`",
        "GRANT SELECT, INSERT, CREATE TEMPORARY TABLES, LOCK TABLES ON `test`.* TO PUBLIC",
        "GRANT EXECUTE ON PROCEDURE `shop`.`load` TO `roley`@`127.0.0.1` WITH GRANT OPTION",
        "GRANT PROXY ON ''@'%' TO 'roley'@'127.0.0.1'",
        "SET DEFAULT ROLE `writer_role` FOR `roley`@`127.0.0.1`",
    ]
    assert write_grants(lines, ACCOUNT) == [
        ("FILE", "*.*"),
        ("UPDATE", "shop.customers"),
        ("INSERT", "shop.orders (through writer_role)"),
        ("INSERT", "test.* (through PUBLIC)"),
        ("CREATE TEMPORARY TABLES", "test.* (through PUBLIC)"),
        ("EXECUTE", "shop.load"),
        ("GRANT OPTION", "shop.load"),
    ]


def test_mysql_8_dynamic_privileges_count_and_reading_ones_do_not() -> None:
    lines = [
        "GRANT SELECT, PROCESS, REPLICATION CLIENT ON *.* TO `ro`@`%`",
        "GRANT BACKUP_ADMIN,SYSTEM_VARIABLES_ADMIN ON *.* TO `ro`@`%`",
        "GRANT ALL PRIVILEGES ON `shop`.* TO `ro`@`%`",
    ]
    assert write_grants(lines, "ro@%") == [
        ("BACKUP_ADMIN", "*.*"),
        ("SYSTEM_VARIABLES_ADMIN", "*.*"),
        ("ALL PRIVILEGES", "shop.*"),
    ]
