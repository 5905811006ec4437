// SPDX-License-Identifier: MIT
pragma solidity ^0.8.12;

import "@openzeppelin/contracts/token/ERC20/ERC20.sol";

/**
 * A fee token for the embedded local chain and the tests: a plain OpenZeppelin ERC20 whose `mint` anyone may call, so a
 * demo account can be given tokens without a faucet. Never deploy it where its tokens could be mistaken for value.
 */
contract TestToken is ERC20 {
    uint8 private immutable tokenDecimals;

    constructor(string memory name_, string memory symbol_, uint8 decimals_) ERC20(name_, symbol_) {
        tokenDecimals = decimals_;
    }

    function decimals() public view override returns (uint8) {
        return tokenDecimals;
    }

    /// Open to anyone: this token is for local chains only.
    function mint(address to, uint256 amount) external {
        _mint(to, amount);
    }
}
