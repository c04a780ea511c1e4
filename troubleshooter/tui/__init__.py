"""The Textual front end. Everything it shows comes from the core (troubleshooter.service.guide and friends);
nothing in the core imports this package."""
