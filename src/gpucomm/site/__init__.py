"""Site helpers: what a node offers (probe) and the building blocks of config/systems/*.py
(siteconf).  No ReFrame import: the configuration files load these before ReFrame's own."""
